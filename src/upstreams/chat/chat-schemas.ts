import { z } from 'zod';

/*
 * The chat server's resources (chat-service-api.md section 2, Zulip's OpenAPI components).
 * Objects are loose so a newer server's extra fields pass through; what the document says is
 * always there is required, and a breach is a 502.
 */

export const Draft = z.looseObject({
  id: z.number().int(),
  type: z.enum(['', 'stream', 'private']),
  to: z.array(z.number().int()),
  topic: z.string(),
  content: z.string(),
  timestamp: z.number().int(),
});
export type Draft = z.infer<typeof Draft>;

export const DraftsResponse = z.looseObject({
  count: z.number().int().nonnegative(),
  drafts: z.array(Draft),
});

export const ChannelFolder = z.looseObject({
  id: z.number().int(),
  name: z.string(),
  /** From feature level 414; older servers sort by id. */
  order: z.number().int().optional(),
  date_created: z.number().int().nullable().optional(),
  creator_id: z.number().int().nullable().optional(),
  description: z.string().optional(),
  rendered_description: z.string().optional(),
  is_archived: z.boolean(),
});
export type ChannelFolder = z.infer<typeof ChannelFolder>;

export const ChannelFoldersResponse = z.looseObject({ channel_folders: z.array(ChannelFolder) });

/**
 * A channel of GET /streams (zulip-openapi.yaml, get-streams; BasicChannelBase): the fields the
 * gateway reads, the rest passed through.
 */
export const Stream = z.looseObject({
  stream_id: z.number().int(),
  name: z.string(),
  description: z.string(),
  invite_only: z.boolean(),
  /**
   * Required by the document, but new in Zulip 10.0 (feature level 315): older servers leave
   * it out, and never list archived channels, so its absence means "not archived".
   */
  is_archived: z.boolean().default(false),
});
export type Stream = z.infer<typeof Stream>;

export const StreamsResponse = z.looseObject({ streams: z.array(Stream) });

/** POST /register (zulip-openapi.yaml): the queue, where to start, and the folder snapshot. */
export const RegisterResponse = z.looseObject({
  queue_id: z.string().min(1),
  last_event_id: z.number().int(),
  idle_queue_timeout_secs: z.number().int().optional(),
  zulip_feature_level: z.number().int().optional(),
  channel_folders: z.array(ChannelFolder).optional(),
});
export type RegisterResponse = z.infer<typeof RegisterResponse>;

/** One event of GET /events: only its id and type are read; folder events trigger a refresh. */
export const ChatEvent = z.looseObject({ id: z.number().int(), type: z.string() });
export const EventsResponse = z.looseObject({ events: z.array(ChatEvent) });

export const User = z.looseObject({
  user_id: z.number().int(),
  delivery_email: z.string().nullable().optional(),
  email: z.string(),
  full_name: z.string(),
  date_joined: z.string().optional(),
  is_active: z.boolean(),
  is_owner: z.boolean().optional(),
  is_admin: z.boolean(),
  is_guest: z.boolean(),
  is_bot: z.boolean(),
  bot_type: z.number().int().nullable().optional(),
  bot_owner_id: z.number().int().nullable().optional(),
  role: z.number().int().optional(),
  timezone: z.string().optional(),
  avatar_url: z.string().nullable().optional(),
  avatar_version: z.number().int().optional(),
  profile_data: z.record(z.string(), z.looseObject({ value: z.string() })).optional(),
});
export type User = z.infer<typeof User>;

export const UserResponse = z.looseObject({ user: User });

/** Every answer carries `result` and `msg` (document 2.1); errors add `code`. */
export const ChatEnvelope = z.looseObject({
  result: z.enum(['success', 'error']),
  msg: z.string(),
  code: z.string().optional(),
});
export type ChatEnvelope = z.infer<typeof ChatEnvelope>;

/** POST /fetch_api_key (Zulip OpenAPI): the user's API key and the email to use with it. */
export const ApiKeyResponse = z.looseObject({
  api_key: z.string().min(1),
  email: z.string().min(1),
  user_id: z.number().int().optional(),
});

/** GET /users/me: who the credentials belong to. */
export const OwnUser = z.looseObject({
  user_id: z.number().int(),
  email: z.string(),
  full_name: z.string(),
  role: z.number().int().optional(),
  is_admin: z.boolean().optional(),
  is_owner: z.boolean().optional(),
  is_guest: z.boolean().optional(),
  is_bot: z.boolean().optional(),
});
export type OwnUser = z.infer<typeof OwnUser>;

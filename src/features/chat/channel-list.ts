import { z } from 'zod';
import type { Stream } from '../../upstreams/chat/chat-schemas.js';

/** One channel as `GET /api/chat/channels` answers it (contract v4 section 2). */
export const Channel = z.strictObject({
  /** Zulip's `stream_id`. */
  id: z.number().int(),
  name: z.string(),
  description: z.string(),
  /** Zulip's `invite_only`. */
  private: z.boolean(),
});

export const ChannelList = z.strictObject({ channels: z.array(Channel) });
export type ChannelList = z.infer<typeof ChannelList>;

/**
 * Zulip's channels as the gateway answers them: by name after `toLowerCase()` (no locale),
 * compared as JavaScript compares strings, ties by id. Archived channels are dropped unless
 * asked for, whatever the server did with `exclude_archived` (it is new in feature level 315).
 * Private channels are dropped when `publicOnly` (the service account answers everyone).
 */
export function toChannelList(
  streams: readonly Stream[],
  options: { includeArchived: boolean; publicOnly: boolean },
): ChannelList {
  const channels = streams
    .filter((s) => options.includeArchived || s.is_archived !== true)
    .filter((s) => !options.publicOnly || !s.invite_only)
    .map((s) => ({
      id: s.stream_id,
      name: s.name,
      description: s.description,
      private: s.invite_only,
      sortName: s.name.toLowerCase(),
    }))
    .sort((a, b) => (a.sortName < b.sortName ? -1 : a.sortName > b.sortName ? 1 : a.id - b.id));
  return { channels: channels.map(({ sortName: _, ...channel }) => channel) };
}

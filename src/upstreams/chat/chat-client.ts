import { callChat, type Call, type ChatClientOptions, type ChatCredentials } from './chat-call.js';
import {
  ApiKeyResponse,
  ChannelFoldersResponse,
  ChatEnvelope,
  OwnUser,
  type OwnUser as OwnUserType,
  DraftsResponse,
  UserResponse,
  EventsResponse,
  RegisterResponse,
  type RegisterResponse as RegisterResponseType,
  StreamsResponse,
  type ChannelFolder,
  type Draft,
  type Stream,
  type User,
} from './chat-schemas.js';

export { refusedCredentialsOf } from './chat-call.js';
export type { ChatClientOptions, ChatCredentials } from './chat-call.js';

export interface ChatCall {
  credentials: ChatCredentials;
  requestId: string;
}

export interface StatusUpdate {
  status_text?: string | undefined;
  emoji_name?: string | undefined;
  emoji_code?: string | undefined;
  reaction_type?: string | undefined;
}

export interface ChatClient {
  getDrafts(call: ChatCall): Promise<{ count: number; drafts: Draft[] }>;
  getChannelFolders(call: ChatCall, includeArchived: boolean): Promise<ChannelFolder[]>;
  /**
   * GET /streams (get-streams): the channels the credentials can see, as the server sent them.
   * `exclude_archived` goes out either way (`false` with `includeArchived`). It is new in Zulip
   * 10.0 (feature level 315): an older server ignores it, names it in
   * `ignored_parameters_unsupported`, and answers without `is_archived` (read as false). A
   * caller that wants archived channels out therefore filters on `is_archived` itself too.
   */
  getStreams(call: ChatCall, options: { includeArchived: boolean }): Promise<Stream[]>;
  getUserByEmail(
    call: ChatCall,
    email: string,
    options: { clientGravatar?: boolean; includeCustomProfileFields?: boolean },
  ): Promise<User>;
  updateUserStatus(call: ChatCall, userId: number, update: StatusUpdate): Promise<void>;
  deactivateEmoji(call: ChatCall, emojiName: string): Promise<void>;
  /** Password login: the user's own API key (no Basic auth on this endpoint). */
  fetchApiKey(email: string, password: string, requestId: string): Promise<ChatCredentials>;
  /** Whose credentials these are; a 401 means they are wrong. */
  getOwnUser(call: ChatCall): Promise<OwnUserType>;
  /** POST /register: a queue for these event types, with the snapshot of `fetchEventTypes`. */
  registerQueue(
    call: ChatCall,
    input: { eventTypes: readonly string[]; fetchEventTypes: readonly string[] },
  ): Promise<RegisterResponseType>;
  /**
   * GET /events: the events after `lastEventId`, long-polled up to `timeoutMs`; throws
   * EventQueueLost when the server no longer has the queue.
   */
  getEvents(
    call: ChatCall,
    queue: { queueId: string; lastEventId: number },
    poll: { timeoutMs: number; signal: AbortSignal },
  ): Promise<{ id: number; type: string }[]>;
  /** DELETE /events: the queue is no longer wanted. */
  deleteQueue(call: ChatCall, queueId: string): Promise<void>;
}

const SuccessOnly = ChatEnvelope.refine(
  (body) => body.result === 'success',
  'result must be success',
);

/** Booleans travel as JSON literals, as Zulip parses them ("1" is "not a boolean"). */
function query(params: Record<string, boolean | undefined>): string {
  const pairs = Object.entries(params).filter(
    (entry): entry is [string, boolean] => entry[1] !== undefined,
  );
  return pairs.length === 0
    ? ''
    : `?${new URLSearchParams(pairs.map(([k, v]): [string, string] => [k, String(v)])).toString()}`;
}

/**
 * Talks to `{CHAT_BASE_URL}/api/v1` (chat document section 4). Path parameters are encoded as
 * one segment each, so no input can change the upstream path. Writes are never retried.
 */
export function createChatClient(options: ChatClientOptions): ChatClient {
  const call: Call = (operation, caller, request, schema) =>
    callChat(options, operation, caller, request, schema);
  return { ...chatReads(call), ...chatWrites(call), ...eventQueue(call) };
}

/** The reads: GETs, retried once within the read deadline. */
function chatReads(
  call: Call,
): Pick<
  ChatClient,
  'getDrafts' | 'getChannelFolders' | 'getStreams' | 'getUserByEmail' | 'getOwnUser'
> {
  return {
    async getDrafts(c) {
      const { count, drafts } = await call(
        'drafts',
        c,
        { method: 'GET', path: '/drafts' },
        DraftsResponse,
      );
      return { count, drafts };
    },
    async getChannelFolders(c, includeArchived) {
      const path = `/channel_folders${query({ include_archived: includeArchived })}`;
      return (await call('channel-folders', c, { method: 'GET', path }, ChannelFoldersResponse))
        .channel_folders;
    },
    async getStreams(c, { includeArchived }) {
      const path = `/streams${query({ exclude_archived: !includeArchived })}`;
      return (await call('streams', c, { method: 'GET', path }, StreamsResponse)).streams;
    },
    async getUserByEmail(c, email, o) {
      const path = `/users/${encodeURIComponent(email)}${query({
        client_gravatar: o.clientGravatar,
        include_custom_profile_fields: o.includeCustomProfileFields,
      })}`;
      return (await call('user', c, { method: 'GET', path }, UserResponse)).user;
    },
    getOwnUser: (c) => call('me', c, { method: 'GET', path: '/users/me' }, OwnUser),
  };
}

/** The writes and the login: sent once. */
function chatWrites(
  call: Call,
): Pick<ChatClient, 'updateUserStatus' | 'deactivateEmoji' | 'fetchApiKey'> {
  return {
    async updateUserStatus(c, userId, update) {
      const form = new URLSearchParams(
        Object.entries(update).filter((entry): entry is [string, string] => entry[1] !== undefined),
      );
      await call(
        'status',
        c,
        { method: 'POST', path: `/users/${userId}/status`, form },
        SuccessOnly,
      );
    },
    async fetchApiKey(email, password, requestId) {
      const form = new URLSearchParams({ username: email, password });
      const result = await call(
        'login',
        { credentials: undefined, requestId },
        { method: 'POST', path: '/fetch_api_key', form, secrets: [password] },
        ApiKeyResponse,
      );
      return { email: result.email, apiKey: result.api_key };
    },
    async deactivateEmoji(c, emojiName) {
      await call(
        'emoji',
        c,
        { method: 'DELETE', path: `/realm/emoji/${encodeURIComponent(emojiName)}` },
        SuccessOnly,
      );
    },
  };
}

/** The event queue: register, the long-poll, and the deletion. */
function eventQueue(call: Call): Pick<ChatClient, 'registerQueue' | 'getEvents' | 'deleteQueue'> {
  return {
    registerQueue: (c, input) =>
      call(
        'register',
        c,
        {
          method: 'POST',
          path: '/register',
          form: new URLSearchParams({
            event_types: JSON.stringify(input.eventTypes),
            fetch_event_types: JSON.stringify(input.fetchEventTypes),
          }),
        },
        RegisterResponse,
      ),
    async getEvents(c, queue, poll) {
      const params = new URLSearchParams({
        queue_id: queue.queueId,
        last_event_id: String(queue.lastEventId),
      });
      const path = `/events?${params.toString()}`;
      return (await call('events', c, { method: 'GET', path, longPoll: poll }, EventsResponse))
        .events;
    },
    async deleteQueue(c, queueId) {
      const form = new URLSearchParams({ queue_id: queueId });
      await call('delete-queue', c, { method: 'DELETE', path: '/events', form }, SuccessOnly);
    },
  };
}

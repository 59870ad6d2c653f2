import type { z } from 'zod';
import type { AppError } from '../../errors/app-error.js';
import { parseWith } from '../../errors/parse-with.js';
import type { SecretScrubber } from '../../security/scrub-secrets.js';
import { parseJsonBody, schemaBreach } from '../http/transport-errors.js';
import type { Upstream } from '../http/upstream.js';
import { EventQueueLost, toChatError, type ChatOperation } from './chat-errors.js';
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
  type ChannelFolder,
  type Draft,
  type User,
} from './chat-schemas.js';

/** Whose rights a chat call uses: the service account or a logged-in user (HTTP Basic). */
export interface ChatCredentials {
  email: string;
  apiKey: string;
}

export interface ChatClientOptions {
  upstream: Upstream;
  /** Reads: retried once within it. */
  deadlineMs: number;
  /** Writes and logins: never retried. */
  writeDeadlineMs: number;
  /** Upper bound of a passed-on Retry-After. */
  retryAfterMaxSeconds: number;
  /** UPSTREAM_MAX_JSON_DEPTH. */
  maxJsonDepth: number;
  /**
   * Removes the gateway's configured secrets from the server's text, and those of the call
   * that produced it (its key, its Basic value, a login password).
   */
  scrub: SecretScrubber;
}

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

/**
 * Which credentials a 401 refused. A WeakMap, not a field: the error travels to logs, and
 * credentials must not travel with it. Callers that share a load (single flight) can tell a
 * refusal of their own credentials from someone else's.
 */
const refused = new WeakMap<AppError, ChatCredentials>();

export function refusedCredentialsOf(error: AppError): ChatCredentials | undefined {
  return refused.get(error);
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

/** The queue id of a BAD_EVENT_QUEUE_ID answer, else undefined. */
function queueLost(body: Buffer): string | undefined {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { code?: unknown; queue_id?: unknown };
    if (parsed.code !== 'BAD_EVENT_QUEUE_ID') return undefined;
    return typeof parsed.queue_id === 'string' ? parsed.queue_id : '';
  } catch {
    return undefined;
  }
}

/** The chat server's REST API below CHAT_BASE_URL (chat document section 4). */
const CHAT_API = '/api/v1';

/** Who a call is made as, and the request it serves. */
interface ChatCaller {
  credentials: ChatCredentials | undefined;
  requestId: string;
}

interface ChatRequest {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  form?: URLSearchParams;
  /** A long-poll: its own deadline, no retry, outside the breaker. */
  longPoll?: { timeoutMs: number; signal: AbortSignal };
  /** Secrets the request carries besides its credentials (a login password). */
  secrets?: readonly string[];
}

/** One call as `caller`; a non-success answer becomes the contract's error (chat-errors.ts). */
function callChat<S extends z.ZodType>(
  options: ChatClientOptions,
  operation: ChatOperation,
  { credentials, requestId }: ChatCaller,
  request: ChatRequest,
  schema: S,
): Promise<z.output<S>> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const basic = credentials
    ? Buffer.from(`${credentials.email}:${credentials.apiKey}`).toString('base64')
    : undefined;
  if (basic !== undefined) headers['authorization'] = `Basic ${basic}`;
  // Everything secret this call sent, in the forms the scrubber knows: a server's error may
  // echo the key or the whole Authorization header (contract section 1).
  const sent = [credentials?.apiKey, basic, ...(request.secrets ?? [])];
  if (request.form) headers['content-type'] = 'application/x-www-form-urlencoded';
  // Only GETs are idempotent here; the status update, the emoji deletion and the login
  // POST are sent once (a retried deletion could report 404 for its own success).
  const read = request.method === 'GET';
  return options.upstream.call({
    operation,
    method: request.method,
    path: `${CHAT_API}${request.path}`,
    headers,
    ...(request.form ? { body: request.form.toString() } : {}),
    requestId,
    deadlineMs: request.longPoll
      ? request.longPoll.timeoutMs
      : read
        ? options.deadlineMs
        : options.writeDeadlineMs,
    retry: read && !request.longPoll,
    ...(request.longPoll ? { longPoll: true, signal: request.longPoll.signal } : {}),
    accept(response) {
      if (response.status === 400 && operation === 'events') {
        const lost = queueLost(response.body);
        if (lost !== undefined) throw new EventQueueLost(lost);
      }
      if (response.status !== 200) {
        const error = toChatError(response, operation, {
          retryAfterMaxSeconds: options.retryAfterMaxSeconds,
          scrub: (text) => options.scrub(text, sent),
        });
        if (error.code === 'UPSTREAM_AUTH_FAILED' && credentials) refused.set(error, credentials);
        throw error;
      }
      return parseWith(schema, parseJsonBody(response, 'chat', options.maxJsonDepth), (error) => {
        throw schemaBreach(
          'chat',
          'The chat server sent a response that breaks its schema.',
          error,
        );
      });
    },
  });
}

/**
 * Talks to `{CHAT_BASE_URL}/api/v1` (chat document section 4). Path parameters are encoded as
 * one segment each, so no input can change the upstream path. Writes are never retried.
 */
export function createChatClient(options: ChatClientOptions): ChatClient {
  const call = <S extends z.ZodType>(
    operation: ChatOperation,
    caller: ChatCaller,
    request: ChatRequest,
    schema: S,
  ) => callChat(options, operation, caller, request, schema);

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
    async getUserByEmail(c, email, o) {
      const path = `/users/${encodeURIComponent(email)}${query({
        client_gravatar: o.clientGravatar,
        include_custom_profile_fields: o.includeCustomProfileFields,
      })}`;
      return (await call('user', c, { method: 'GET', path }, UserResponse)).user;
    },
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
    getOwnUser: (c) => call('me', c, { method: 'GET', path: '/users/me' }, OwnUser),
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

import type { z } from 'zod';
import type { AppError } from '../../errors/app-error.js';
import { parseWith } from '../../errors/parse-with.js';
import type { SecretScrubber } from '../../security/scrub-secrets.js';
import { parseJsonBody, schemaBreach } from '../http/transport-errors.js';
import type { Upstream, UpstreamResponse } from '../http/upstream.js';
import { toUpstreamError } from '../to-upstream-error.js';
import { SERVICE_NAME } from '../upstream-failures.js';
import type { ChatOperation } from './chat-errors.js';

/*
 * How one chat call is made, whichever endpoint it is for (chat-client.ts lists those): its
 * credentials, deadline, retry rule, the secrets its error text must lose, and its failure.
 */

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

/**
 * Which credentials a 401 refused. A WeakMap, not a field: the error travels to logs, and
 * credentials must not travel with it. Callers that share a load (single flight) can tell a
 * refusal of their own credentials from someone else's.
 */
const refused = new WeakMap<AppError, ChatCredentials>();

export function refusedCredentialsOf(error: AppError): ChatCredentials | undefined {
  return refused.get(error);
}

/** The chat server's REST API below CHAT_BASE_URL (chat document section 4). */
const CHAT_API = '/api/v1';

/** Who a call is made as, and the request it serves. */
export interface ChatCaller {
  credentials: ChatCredentials | undefined;
  requestId: string;
}

export interface ChatRequest {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  form?: URLSearchParams;
  /** A long-poll: its own deadline, no retry, outside the breaker. */
  longPoll?: { timeoutMs: number; signal: AbortSignal };
  /** Secrets the request carries besides its credentials (a login password). */
  secrets?: readonly string[];
}

/** One call, as each method of the client (chat-client.ts) makes it. */
export type Call = <S extends z.ZodType>(
  operation: ChatOperation,
  caller: ChatCaller,
  request: ChatRequest,
  schema: S,
) => Promise<z.output<S>>;

/** One call as `caller`; a non-200 answer becomes the contract's error (upstream-failures.ts). */
export function callChat<S extends z.ZodType>(
  options: ChatClientOptions,
  operation: ChatOperation,
  { credentials, requestId }: ChatCaller,
  request: ChatRequest,
  schema: S,
): Promise<z.output<S>> {
  const basic = credentials
    ? Buffer.from(`${credentials.email}:${credentials.apiKey}`).toString('base64')
    : undefined;
  // Everything secret this call sent, in the forms the scrubber knows: a server's error may
  // echo the key or the whole Authorization header (contract section 1).
  const sent = [credentials?.apiKey, basic, ...(request.secrets ?? [])];
  const scrub = (text: string) => options.scrub(text, sent);
  // Only GETs are idempotent here; the status update, the emoji deletion and the login
  // POST are sent once (a retried deletion could report 404 for its own success).
  const read = request.method === 'GET';
  return options.upstream.call({
    operation,
    method: request.method,
    path: `${CHAT_API}${request.path}`,
    headers: chatHeaders(basic, request.form !== undefined),
    ...(request.form ? { body: request.form.toString() } : {}),
    requestId,
    deadlineMs:
      request.longPoll?.timeoutMs ?? (read ? options.deadlineMs : options.writeDeadlineMs),
    retry: read && !request.longPoll,
    ...(request.longPoll ? { longPoll: true, signal: request.longPoll.signal } : {}),
    accept(response) {
      if (response.status !== 200) {
        throw chatFailure(options, operation, response, scrub, credentials);
      }
      return parseWith(schema, parseJsonBody(response, 'chat', options.maxJsonDepth), (error) => {
        throw schemaBreach(
          'chat',
          `${SERVICE_NAME.chat} sent a response that breaks its schema.`,
          error,
        );
      });
    },
  });
}

function chatHeaders(basic: string | undefined, form: boolean): Record<string, string> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (basic !== undefined) headers['authorization'] = `Basic ${basic}`;
  if (form) headers['content-type'] = 'application/x-www-form-urlencoded';
  return headers;
}

/** The contract's error for a non-200 answer; a refused user's credentials are remembered. */
function chatFailure(
  options: ChatClientOptions,
  operation: ChatOperation,
  response: UpstreamResponse,
  scrub: (text: string) => string,
  credentials: ChatCredentials | undefined,
): AppError {
  const { retryAfterMaxSeconds } = options;
  const error = toUpstreamError({
    source: 'chat',
    operation,
    ...response,
    retryAfterMaxSeconds,
    scrub,
  });
  if (error.code === 'UPSTREAM_AUTH_FAILED' && credentials) refused.set(error, credentials);
  return error;
}

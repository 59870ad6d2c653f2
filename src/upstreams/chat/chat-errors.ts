import { AppError, type ErrorCode } from '../../errors/app-error.js';
import { failedWith, rateLimitedBy, unexpectedStatus } from '../http/status-errors.js';
import type { UpstreamResponse } from '../http/upstream.js';
import { ChatEnvelope } from './chat-schemas.js';

/** Which call failed: some messages mean different things on different endpoints. */
export type ChatOperation =
  | 'drafts'
  | 'channel-folders'
  | 'user'
  | 'status'
  | 'emoji'
  | 'login'
  | 'me'
  | 'register'
  | 'events'
  | 'delete-queue';

/**
 * The event queue is gone (GET /events' BAD_EVENT_QUEUE_ID: garbage-collected, or the server
 * restarted): the client registers a new one and takes its snapshot as the truth. One of the
 * error family, a documented refusal of what the gateway sent (a 400 from the chat server):
 * its call's outcome is `client_error`, and it is no fault for the breaker.
 */
export class EventQueueLost extends AppError {
  constructor(readonly queueId: string) {
    super('BAD_REQUEST', 'The chat server no longer has the event queue.', { source: 'chat' });
    this.name = 'EventQueueLost';
  }
}

const MAX_DETAIL = 500;

/**
 * The chat server's documented messages that the contract gives their own status (section 3:
 * "Insufficient permission" is 403, "No such user" is 404, a missing emoji on deletion is 404
 * at every feature level). The server itself answers 400 (or 404 from FL 190 for the emoji)
 * with code BAD_REQUEST for all of them, so the message is the only thing to go by: this
 * table is the one place that reads message text.
 */
function classify(message: string, operation: ChatOperation): ErrorCode {
  if (message === 'Insufficient permission') return 'FORBIDDEN';
  if (message === 'Must be an organization administrator or emoji author') return 'FORBIDDEN';
  if (message === 'No such user') return 'NOT_FOUND';
  if (operation === 'emoji' && /^Emoji '.*' does not exist$/s.test(message)) return 'NOT_FOUND';
  return 'BAD_REQUEST';
}

/** Turns any non-success answer of the chat server into the contract's error. */
export function toChatError(
  response: UpstreamResponse,
  operation: ChatOperation,
  options: {
    retryAfterMaxSeconds: number;
    /** Removes the gateway's secrets from the server's text before it goes anywhere. */
    scrub: (text: string) => string;
  },
): AppError {
  const { retryAfterMaxSeconds, scrub } = options;
  const { status } = response;
  let body: unknown;
  try {
    body = JSON.parse(response.body.toString('utf8'));
  } catch {
    body = undefined;
  }
  const envelope = ChatEnvelope.safeParse(body);

  if (status === 429) {
    // Zulip sends fractional seconds, in the header and as `retry-after` in the body.
    const bodyRetry = (body as Record<string, unknown> | undefined)?.['retry-after'];
    const header = response.headers['retry-after'];
    return rateLimitedBy(
      'chat',
      header === undefined && typeof bodyRetry === 'number' ? bodyRetry : header,
      retryAfterMaxSeconds,
    );
  }
  if (status === 401 && (operation === 'login' || operation === 'me')) {
    // At login the credentials are the user's own: wrong ones are the caller's problem.
    const message = envelope.success
      ? scrub(envelope.data.msg).slice(0, MAX_DETAIL)
      : 'The credentials were refused.';
    return new AppError('UNAUTHORIZED', message, { source: 'chat' });
  }
  if (status === 401) {
    // The gateway's own credentials were refused: the browser can do nothing about that, so it
    // is a 502 and the server's WWW-Authenticate challenge is not passed on.
    return new AppError(
      'UPSTREAM_AUTH_FAILED',
      "The chat server rejected the gateway's credentials.",
      {
        source: 'chat',
        cause: envelope.success
          ? new Error(scrub(`${envelope.data.code ?? ''} ${envelope.data.msg}`))
          : undefined,
      },
    );
  }
  if (status >= 500) return failedWith('chat', status);
  if (!envelope.success || envelope.data.result !== 'error') {
    return new AppError(
      'UPSTREAM_BAD_RESPONSE',
      `The chat server answered HTTP ${status} without an error body.`,
      {
        source: 'chat',
      },
    );
  }
  if (status === 404 && envelope.data.msg === 'Not Found') {
    // Zulip's answer for an endpoint it does not have: a server older than the feature needs.
    return new AppError(
      'UPSTREAM_BAD_RESPONSE',
      'The chat server does not support this operation.',
      {
        source: 'chat',
      },
    );
  }
  if (status !== 400 && status !== 403 && status !== 404) return unexpectedStatus('chat', status);
  const message = scrub(envelope.data.msg).slice(0, MAX_DETAIL);
  return new AppError(classify(message, operation), message, { source: 'chat' });
}

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { errors, request } from 'undici';
import { beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors/app-error.js';
import { statusOf } from '../../src/errors/to-problem.js';
import { isUpstreamFailure, isUpstreamFault } from '../../src/errors/upstream-failure.js';
import { EventQueueLost } from '../../src/upstreams/chat/chat-errors.js';
import {
  failureRowOf,
  isRetryable,
  toUpstreamError,
  type FailedAnswer,
  type FailedCall,
  type NoAnswerCall,
} from '../../src/upstreams/to-upstream-error.js';
import {
  SERVICE_NAME,
  UPSTREAM_FAILURES,
  type FailureRow,
  type UpstreamSource,
} from '../../src/upstreams/upstream-failures.js';

/*
 * The upstream-failure table (issue 32), walked the way http-proxy-middleware's spec walks
 * getStatusCode: each failure below is one an upstream or a transport really produces (an
 * undici error, a refused connection, an answer with its status, headers and body), put
 * through the one function. Expectations are written out by hand, so a change to the table
 * shows here; the last test checks that every row is reached by some case.
 */

const SECRET = 'sekrit-0123456789abcdef';
const scrub = (text: string) => text.replaceAll(SECRET, '[redacted]');
const MAX_RETRY_AFTER = 3600;

/** An answer as the transports hand it over; chat answers come with the call's scrubber. */
function answer(
  source: UpstreamSource,
  operation: string,
  status: number,
  body?: unknown,
  headers: Record<string, string> = {},
): FailedAnswer {
  return {
    source,
    operation,
    status,
    headers: { 'content-type': 'application/json', ...headers },
    ...(body === undefined
      ? {}
      : { body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)) }),
    retryAfterMaxSeconds: MAX_RETRY_AFTER,
    ...(source === 'chat' ? { scrub } : {}),
  };
}

const chat = (
  operation: string,
  status: number,
  body?: unknown,
  headers?: Record<string, string>,
) => answer('chat', operation, status, body, headers);
const search = (status: number, headers?: Record<string, string>) =>
  answer('search', 'search', status, '<html>busy</html>', {
    'content-type': 'text/html',
    ...headers,
  });
const redirect = (status: number, headers?: Record<string, string>) =>
  answer('search', 'redirect', status, undefined, headers);
const zulipError = (msg: string, code = 'BAD_REQUEST') => ({ result: 'error', msg, code });

/** A call that got no answer: what the transport threw, within a 500 ms deadline. */
const noAnswer = (
  source: UpstreamSource,
  error: unknown,
  deadlinePassed = false,
): NoAnswerCall => ({
  source,
  operation: source === 'chat' ? 'drafts' : 'search',
  error,
  deadlineMs: 500,
  deadlinePassed,
});

/** A real refused connection: undici's error for a port nobody listens on. */
let refused: unknown;
beforeAll(async () => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  refused = await request(`http://127.0.0.1:${port}/`).catch((error: unknown) => error);
});

type Breaker = 'fault' | 'refusal' | 'none';

interface Expected {
  code: string;
  /** The HTTP status the browser gets (to-problem.ts). */
  status: number;
  /** The envelope's `source`. */
  source: 'chat' | 'search' | 'gateway';
  detail: string;
  /** Whether an idempotent read is sent again (json-transport.ts). */
  retry: boolean;
  /** What the breaker makes of it (errors/upstream-failure.ts). */
  breaker: Breaker;
  retryAfter?: number;
}

const cases: [string, () => FailedCall, Expected][] = [
  // No answer.
  [
    'the gateway is out of descriptors (EMFILE)',
    () => noAnswer('search', Object.assign(new Error('socket'), { code: 'EMFILE' })),
    {
      code: 'SERVICE_UNAVAILABLE',
      status: 503,
      source: 'gateway',
      detail: 'The gateway is short of resources; try again.',
      retry: false,
      breaker: 'none',
      retryAfter: 1,
    },
  ],
  [
    'the chat server sends more than the size cap',
    () => noAnswer('chat', new errors.ResponseExceededMaxSizeError()),
    {
      code: 'UPSTREAM_BAD_RESPONSE',
      status: 502,
      source: 'chat',
      detail: 'The chat server sent an oversized response.',
      retry: false,
      breaker: 'fault',
    },
  ],
  [
    "the search service's headers do not come in time",
    () => noAnswer('search', new errors.HeadersTimeoutError()),
    {
      code: 'UPSTREAM_TIMEOUT',
      status: 504,
      source: 'search',
      detail: 'The search service did not answer within 500 ms.',
      retry: false,
      breaker: 'fault',
    },
  ],
  [
    'the connection to the chat server is not made in time',
    () => noAnswer('chat', new errors.ConnectTimeoutError()),
    {
      code: 'UPSTREAM_TIMEOUT',
      status: 504,
      source: 'chat',
      detail: 'The chat server did not answer within 500 ms.',
      retry: false,
      breaker: 'fault',
    },
  ],
  [
    "the call's deadline aborts it",
    () => noAnswer('chat', new DOMException('This operation was aborted', 'AbortError'), true),
    {
      code: 'UPSTREAM_TIMEOUT',
      status: 504,
      source: 'chat',
      detail: 'The chat server did not answer within 500 ms.',
      retry: false,
      breaker: 'fault',
    },
  ],
  [
    'the chat server refuses the connection',
    () => noAnswer('chat', refused),
    {
      code: 'UPSTREAM_UNAVAILABLE',
      status: 502,
      source: 'chat',
      detail: 'The chat server could not be reached.',
      retry: true,
      breaker: 'fault',
    },
  ],
  [
    'the search service closes the socket',
    () => noAnswer('search', new errors.SocketError('other side closed')),
    {
      code: 'UPSTREAM_UNAVAILABLE',
      status: 502,
      source: 'search',
      detail: 'The search service could not be reached.',
      retry: true,
      breaker: 'fault',
    },
  ],

  // The chat server.
  [
    'the chat server no longer has the event queue',
    () =>
      chat('events', 400, {
        ...zulipError('Bad event queue id: q1', 'BAD_EVENT_QUEUE_ID'),
        queue_id: 'q1',
      }),
    {
      code: 'BAD_REQUEST',
      status: 400,
      source: 'chat',
      detail: 'The chat server no longer has the event queue.',
      retry: false,
      breaker: 'none',
    },
  ],
  [
    'another call gets BAD_EVENT_QUEUE_ID',
    () => chat('drafts', 400, zulipError('Bad event queue id: q1', 'BAD_EVENT_QUEUE_ID')),
    {
      code: 'BAD_REQUEST',
      status: 400,
      source: 'chat',
      detail: 'Bad event queue id: q1',
      retry: false,
      breaker: 'none',
    },
  ],
  [
    'the chat server throttles with a fractional Retry-After header',
    () =>
      chat('drafts', 429, zulipError('API usage exceeded rate limit', 'RATE_LIMIT_HIT'), {
        'retry-after': '1.5',
      }),
    {
      code: 'RATE_LIMITED',
      status: 429,
      source: 'chat',
      detail: 'The chat server is rate limiting requests; try again later.',
      retry: false,
      breaker: 'refusal',
      retryAfter: 2,
    },
  ],
  [
    "the chat server throttles with only the body's retry-after",
    () =>
      chat('user', 429, {
        ...zulipError('API usage exceeded rate limit', 'RATE_LIMIT_HIT'),
        'retry-after': 2.2,
      }),
    {
      code: 'RATE_LIMITED',
      status: 429,
      source: 'chat',
      detail: 'The chat server is rate limiting requests; try again later.',
      retry: false,
      breaker: 'refusal',
      retryAfter: 3,
    },
  ],
  [
    'a login is refused with a message that echoes the key',
    () => chat('login', 401, zulipError(`Bad key ${SECRET}`, 'UNAUTHORIZED')),
    {
      code: 'UNAUTHORIZED',
      status: 401,
      source: 'chat',
      detail: 'Bad key [redacted]',
      retry: false,
      breaker: 'none',
    },
  ],
  [
    "a session's key is refused without a JSON body",
    () => chat('me', 401, '<html>401</html>'),
    {
      code: 'UNAUTHORIZED',
      status: 401,
      source: 'chat',
      detail: 'The credentials were refused.',
      retry: false,
      breaker: 'none',
    },
  ],
  [
    "the chat server refuses the gateway's own key",
    () => chat('drafts', 401, zulipError('Invalid API key', 'UNAUTHORIZED')),
    {
      code: 'UPSTREAM_AUTH_FAILED',
      status: 502,
      source: 'chat',
      detail: "The chat server rejected the gateway's credentials.",
      retry: false,
      breaker: 'refusal',
    },
  ],
  [
    'the chat server is unavailable (503)',
    () => chat('channel-folders', 503, '<html>down</html>'),
    {
      code: 'UPSTREAM_ERROR',
      status: 502,
      source: 'chat',
      detail: 'The chat server failed (HTTP 503).',
      retry: true,
      breaker: 'fault',
    },
  ],
  [
    'the chat server fails (500)',
    () => chat('drafts', 500, zulipError('Internal server error')),
    {
      code: 'UPSTREAM_ERROR',
      status: 502,
      source: 'chat',
      detail: 'The chat server failed (HTTP 500).',
      retry: false,
      breaker: 'fault',
    },
  ],
  [
    'the chat server answers 400 with an HTML page',
    () => chat('status', 400, '<html>bad</html>'),
    {
      code: 'UPSTREAM_BAD_RESPONSE',
      status: 502,
      source: 'chat',
      detail: 'The chat server answered HTTP 400 without an error body.',
      retry: false,
      breaker: 'fault',
    },
  ],
  [
    'the chat server answers 201 with a success',
    () => chat('status', 201, { result: 'success', msg: '' }),
    {
      code: 'UPSTREAM_BAD_RESPONSE',
      status: 502,
      source: 'chat',
      detail: 'The chat server answered HTTP 201 without an error body.',
      retry: false,
      breaker: 'fault',
    },
  ],
  [
    'the chat server does not have the endpoint',
    () => chat('channel-folders', 404, zulipError('Not Found')),
    {
      code: 'UPSTREAM_BAD_RESPONSE',
      status: 502,
      source: 'chat',
      detail: 'The chat server does not support this operation.',
      retry: false,
      breaker: 'fault',
    },
  ],
  [
    'a status update says "Insufficient permission"',
    () => chat('status', 400, zulipError('Insufficient permission')),
    {
      code: 'FORBIDDEN',
      status: 403,
      source: 'chat',
      detail: 'Insufficient permission',
      retry: false,
      breaker: 'none',
    },
  ],
  [
    "an emoji deletion is not the caller's to make",
    () => chat('emoji', 400, zulipError('Must be an organization administrator or emoji author')),
    {
      code: 'FORBIDDEN',
      status: 403,
      source: 'chat',
      detail: 'Must be an organization administrator or emoji author',
      retry: false,
      breaker: 'none',
    },
  ],
  [
    'the user is not there',
    () => chat('user', 400, zulipError('No such user')),
    {
      code: 'NOT_FOUND',
      status: 404,
      source: 'chat',
      detail: 'No such user',
      retry: false,
      breaker: 'none',
    },
  ],
  [
    'the emoji to delete is not there',
    () => chat('emoji', 404, zulipError("Emoji 'nope' does not exist")),
    {
      code: 'NOT_FOUND',
      status: 404,
      source: 'chat',
      detail: "Emoji 'nope' does not exist",
      retry: false,
      breaker: 'none',
    },
  ],
  [
    "a status update's emoji is not there",
    () => chat('status', 400, zulipError("Emoji 'nope' does not exist")),
    {
      code: 'BAD_REQUEST',
      status: 400,
      source: 'chat',
      detail: "Emoji 'nope' does not exist",
      retry: false,
      breaker: 'none',
    },
  ],
  [
    'the chat server answers an undocumented status with an error',
    () => chat('drafts', 409, zulipError('Conflict')),
    {
      code: 'UPSTREAM_BAD_RESPONSE',
      status: 502,
      source: 'chat',
      detail: 'The chat server answered with unexpected HTTP 409.',
      retry: false,
      breaker: 'fault',
    },
  ],

  // The click-tracking redirect.
  [
    'the redirect is throttled',
    () => redirect(429, { 'retry-after': '99999' }),
    {
      code: 'RATE_LIMITED',
      status: 429,
      source: 'search',
      detail: 'The search service is rate limiting requests; try again later.',
      retry: false,
      breaker: 'refusal',
      retryAfter: MAX_RETRY_AFTER,
    },
  ],
  [
    'the redirect link is refused (401)',
    () => redirect(401),
    {
      code: 'BAD_REQUEST',
      status: 400,
      source: 'search',
      detail: 'The search service rejected this redirect link (HTTP 401).',
      retry: false,
      breaker: 'none',
    },
  ],
  [
    'the redirect fails (503)',
    () => redirect(503),
    {
      code: 'UPSTREAM_ERROR',
      status: 502,
      source: 'search',
      detail: 'The search service answered the redirect with HTTP 503.',
      retry: false,
      breaker: 'fault',
    },
  ],
  [
    'the redirect answers 200 without a Location',
    () => redirect(200),
    {
      code: 'UPSTREAM_ERROR',
      status: 502,
      source: 'search',
      detail: 'The search service answered the redirect with HTTP 200.',
      retry: false,
      breaker: 'fault',
    },
  ],

  // The search.
  [
    'the search is throttled without a Retry-After',
    () => search(429),
    {
      code: 'RATE_LIMITED',
      status: 429,
      source: 'search',
      detail: 'The search service is rate limiting requests; try again later.',
      retry: false,
      breaker: 'refusal',
      retryAfter: 1,
    },
  ],
  [
    "the search service refuses the gateway's token",
    () => search(403),
    {
      code: 'UPSTREAM_AUTH_FAILED',
      status: 502,
      source: 'search',
      detail: "The search service rejected the gateway's credentials.",
      retry: false,
      breaker: 'refusal',
    },
  ],
  [
    'the search answers 502',
    () => search(502),
    {
      code: 'UPSTREAM_ERROR',
      status: 502,
      source: 'search',
      detail: 'The search service failed (HTTP 502).',
      retry: true,
      breaker: 'fault',
    },
  ],
  [
    'the search answers 500',
    () => search(500),
    {
      code: 'UPSTREAM_ERROR',
      status: 502,
      source: 'search',
      detail: 'The search service failed (HTTP 500).',
      retry: false,
      breaker: 'fault',
    },
  ],
  [
    'the search answers 400 with what looks like a chat error',
    () => answer('search', 'search', 400, zulipError('No such user')),
    {
      code: 'UPSTREAM_BAD_RESPONSE',
      status: 502,
      source: 'search',
      detail: 'The search service answered with unexpected HTTP 400.',
      retry: false,
      breaker: 'fault',
    },
  ],
];

function breakerOf(error: AppError): Breaker {
  if (isUpstreamFault(error)) return 'fault';
  return isUpstreamFailure(error) ? 'refusal' : 'none';
}

describe('the upstream-failure table', () => {
  const reached = new Set<FailureRow>();

  it.each(cases)('when %s, then the error follows the table', (_name, failure, expected) => {
    const failed = failure();
    reached.add(failureRowOf(failed));
    const error = toUpstreamError(failed);
    expect(error).toBeInstanceOf(AppError);
    expect({
      code: error.code,
      status: statusOf(error.code),
      source: error.source,
      detail: error.message,
      retry: isRetryable(error),
      breaker: breakerOf(error),
      ...(error.retryAfterSeconds === undefined ? {} : { retryAfter: error.retryAfterSeconds }),
    }).toEqual(expected);
    // A detail that names a service names it one way, whatever failed.
    const named = /^The (chat|search) \w+/.exec(error.message)?.[0];
    if (named !== undefined && error.source !== 'gateway') {
      expect(named).toBe(SERVICE_NAME[error.source]);
    }
  });

  it('when the event queue is lost, then the error is EventQueueLost with its queue id', () => {
    const lost = toUpstreamError(
      chat('events', 400, {
        ...zulipError('Bad event queue id', 'BAD_EVENT_QUEUE_ID'),
        queue_id: 'q1',
      }),
    );
    expect(lost).toBeInstanceOf(EventQueueLost);
    expect((lost as EventQueueLost).queueId).toBe('q1');
    // The server's bare answer, without result or msg, still names the lost queue.
    const bare = toUpstreamError(chat('events', 400, { code: 'BAD_EVENT_QUEUE_ID' }));
    expect(bare).toBeInstanceOf(EventQueueLost);
    expect((bare as EventQueueLost).queueId).toBe('');
  });

  it("when the gateway's own chat key is refused, then the server's words reach the log only, scrubbed", () => {
    const error = toUpstreamError(
      chat('drafts', 401, zulipError(`Invalid API key ${SECRET}`, 'UNAUTHORIZED')),
    );
    expect(error.message).not.toContain('Invalid API key');
    expect((error.cause as Error).message).toBe('UNAUTHORIZED Invalid API key [redacted]');
  });

  it('when no answer came, then the cause is what the transport threw', () => {
    const error = toUpstreamError(noAnswer('chat', refused));
    expect(error.cause).toBe(refused);
  });

  it('when every case has run, then every row of the table was reached by one', () => {
    const unreached = UPSTREAM_FAILURES.filter((row) => !reached.has(row)).map(
      (row) =>
        `${row.source} ${row.operations?.join('|') ?? '*'} ${String(row.status)} → ${row.code}`,
    );
    expect(unreached).toEqual([]);
  });
});

import type { ErrorCode, ErrorSource } from '../errors/app-error.js';

/*
 * Every way a call to an upstream can fail, and the contract's error for it (section 3): one
 * table for both services, every transport and every call, read by one function
 * (to-upstream-error.ts), the way http-proxy-middleware's getStatusCode reads error codes. What
 * each code then does (its HTTP status, the breaker, stale answers, the metrics' outcome) is
 * errors/upstream-failure.ts's and errors/to-problem.ts's, by code, since the cache and the
 * error handler below this layer read them too.
 */

/** An upstream service: where an error came from when it is not the gateway's own. */
export type UpstreamSource = Exclude<ErrorSource, 'gateway'>;

/**
 * How details name each service, never by URL (which may carry credentials). "Server" for chat,
 * as its answers have said since v1; its transport failures once said "service", and now say
 * the same as its answers.
 */
export const SERVICE_NAME: Record<UpstreamSource, string> = {
  chat: 'The chat server',
  search: 'The search service',
};

/** Why no answer came (transport-errors.ts tells them apart). */
export type NoAnswer = 'local-shortage' | 'oversized' | 'timeout' | 'unreachable';

/**
 * An answer's status: one, a list, every 4xx, every status from 500 up (`5xx`: a status past
 * 599 is no better), or any status at all. Or, when no answer came, why not.
 */
export type StatusMatch = number | readonly number[] | '4xx' | '5xx' | 'any' | NoAnswer;

/**
 * What the chat server's body must say (document section 2.1: `result`, `msg`, and `code` on
 * errors). Read only when the rest of the row matches; the search rows never read a body.
 */
export type UpstreamSays =
  /** The body's `code`, whatever else it holds. */
  | { code: string }
  /** An error envelope with this message (after scrubbing, cut to its first 500 characters). */
  | { msg: string | RegExp }
  /** An error envelope, any message. */
  | 'error'
  /** An envelope (`result` and `msg`), success or error. */
  | 'envelope'
  /** Anything but an error envelope: no body, not JSON, or a success. */
  | 'no-error';

/** What a row's detail may name. */
export interface Facts {
  /** SERVICE_NAME of the source. */
  service: string;
  /** The answer's status; 0 when none came. */
  status: number;
  /** The call's deadline. */
  deadlineMs: number;
  /** The upstream's own message, scrubbed and cut to 500 characters; '' without one. */
  message: string;
}

export interface FailureRow {
  /** The service, or `any` for failures before an answer. */
  source: UpstreamSource | 'any';
  /** The calls it covers, as the metrics' `operation` says them; all of them when absent. */
  operations?: readonly string[];
  status: StatusMatch;
  upstream?: UpstreamSays;
  /** The gateway's code: its HTTP status is to-problem.ts's. */
  code: ErrorCode;
  detail(facts: Facts): string;
  /** An idempotent read may be sent once more after this failure (json-transport.ts). */
  retry?: true;
  /** The Retry-After passed on: the header's, else the body's `retry-after`, or a fixed one. */
  retryAfter?: 'header' | 'header-or-body' | number;
  /** The gateway's own trouble, reported with source `gateway`. */
  gatewayOwn?: true;
  /** The upstream's `code` and message go to the log as the cause, never to the browser. */
  causeFromBody?: true;
  /** The event queue is gone: the error is EventQueueLost, on which the event loop re-registers. */
  queueLost?: true;
}

/** The statuses at which the chat server sends its documented errors (document section 7). */
const DOCUMENTED = [400, 403, 404] as const;
/** The 5xx a retry may get past: a proxy's or a load balancer's, or a restart. */
const TRANSIENT = [502, 503, 504] as const;

const failed = (f: Facts) => `${f.service} failed (HTTP ${f.status}).`;
const rateLimited = (f: Facts) => `${f.service} is rate limiting requests; try again later.`;
const rejectedUs = (f: Facts) => `${f.service} rejected the gateway's credentials.`;
const unexpected = (f: Facts) => `${f.service} answered with unexpected HTTP ${f.status}.`;
const theirMessage = (f: Facts) => f.message;

/** First match wins: the order is part of the table. */
export const UPSTREAM_FAILURES: readonly FailureRow[] = [
  // No answer came. A shortage of descriptors or memory is the gateway's, not the upstream's.
  {
    source: 'any',
    status: 'local-shortage',
    code: 'SERVICE_UNAVAILABLE',
    gatewayOwn: true,
    retryAfter: 1,
    detail: () => 'The gateway is short of resources; try again.',
  },
  {
    source: 'any',
    status: 'oversized',
    code: 'UPSTREAM_BAD_RESPONSE',
    detail: (f) => `${f.service} sent an oversized response.`,
  },
  {
    source: 'any',
    status: 'timeout',
    code: 'UPSTREAM_TIMEOUT',
    detail: (f) => `${f.service} did not answer within ${f.deadlineMs} ms.`,
  },
  {
    source: 'any',
    status: 'unreachable',
    code: 'UPSTREAM_UNAVAILABLE',
    retry: true,
    detail: (f) => `${f.service} could not be reached.`,
  },

  // The chat server's non-200 answers. Its documented errors are all 400 (or 404) with code
  // BAD_REQUEST, so the message is the only thing to go by: these rows are the one place that
  // reads message text.
  {
    source: 'chat',
    operations: ['events'],
    status: 400,
    upstream: { code: 'BAD_EVENT_QUEUE_ID' },
    code: 'BAD_REQUEST',
    queueLost: true,
    detail: (f) => `${f.service} no longer has the event queue.`,
  },
  // Zulip sends fractional seconds, in the header and as `retry-after` in the body.
  {
    source: 'chat',
    status: 429,
    code: 'RATE_LIMITED',
    retryAfter: 'header-or-body',
    detail: rateLimited,
  },
  // At login (and the check of a session's key) the credentials are the caller's own.
  {
    source: 'chat',
    operations: ['login', 'me'],
    status: 401,
    upstream: 'envelope',
    code: 'UNAUTHORIZED',
    detail: theirMessage,
  },
  {
    source: 'chat',
    operations: ['login', 'me'],
    status: 401,
    code: 'UNAUTHORIZED',
    detail: () => 'The credentials were refused.',
  },
  // The gateway's own credentials: the browser can do nothing about it, so a 502 without the
  // server's WWW-Authenticate challenge.
  {
    source: 'chat',
    status: 401,
    code: 'UPSTREAM_AUTH_FAILED',
    causeFromBody: true,
    detail: rejectedUs,
  },
  { source: 'chat', status: TRANSIENT, code: 'UPSTREAM_ERROR', retry: true, detail: failed },
  { source: 'chat', status: '5xx', code: 'UPSTREAM_ERROR', detail: failed },
  {
    source: 'chat',
    status: 'any',
    upstream: 'no-error',
    code: 'UPSTREAM_BAD_RESPONSE',
    detail: (f) => `${f.service} answered HTTP ${f.status} without an error body.`,
  },
  // Zulip's answer for an endpoint it does not have: a server older than the feature.
  {
    source: 'chat',
    status: 404,
    upstream: { msg: 'Not Found' },
    code: 'UPSTREAM_BAD_RESPONSE',
    detail: (f) => `${f.service} does not support this operation.`,
  },
  // Contract section 3: these messages get their own status, the text kept.
  {
    source: 'chat',
    status: DOCUMENTED,
    upstream: { msg: 'Insufficient permission' },
    code: 'FORBIDDEN',
    detail: theirMessage,
  },
  {
    source: 'chat',
    status: DOCUMENTED,
    upstream: { msg: 'Must be an organization administrator or emoji author' },
    code: 'FORBIDDEN',
    detail: theirMessage,
  },
  {
    source: 'chat',
    status: DOCUMENTED,
    upstream: { msg: 'No such user' },
    code: 'NOT_FOUND',
    detail: theirMessage,
  },
  // A missing emoji on deletion is 404 at every feature level (the server says 404 from FL 190).
  {
    source: 'chat',
    operations: ['emoji'],
    status: DOCUMENTED,
    upstream: { msg: /^Emoji '.*' does not exist$/s },
    code: 'NOT_FOUND',
    detail: theirMessage,
  },
  {
    source: 'chat',
    status: DOCUMENTED,
    upstream: 'error',
    code: 'BAD_REQUEST',
    detail: theirMessage,
  },
  { source: 'chat', status: 'any', code: 'UPSTREAM_BAD_RESPONSE', detail: unexpected },

  // The click-tracking redirect: the query string is the browser's own, forwarded untouched, so
  // a 4xx is about the link. A 3xx with a Location is its success (search-redirect.ts).
  {
    source: 'search',
    operations: ['redirect'],
    status: 429,
    code: 'RATE_LIMITED',
    retryAfter: 'header',
    detail: rateLimited,
  },
  {
    source: 'search',
    operations: ['redirect'],
    status: '4xx',
    code: 'BAD_REQUEST',
    detail: (f) => `${f.service} rejected this redirect link (HTTP ${f.status}).`,
  },
  {
    source: 'search',
    operations: ['redirect'],
    status: 'any',
    code: 'UPSTREAM_ERROR',
    detail: (f) => `${f.service} answered the redirect with HTTP ${f.status}.`,
  },

  // The search: its document gives only status classes (section 7), so every non-200 is the
  // gateway's problem.
  {
    source: 'search',
    status: 429,
    code: 'RATE_LIMITED',
    retryAfter: 'header',
    detail: rateLimited,
  },
  { source: 'search', status: [401, 403], code: 'UPSTREAM_AUTH_FAILED', detail: rejectedUs },
  { source: 'search', status: TRANSIENT, code: 'UPSTREAM_ERROR', retry: true, detail: failed },
  { source: 'search', status: '5xx', code: 'UPSTREAM_ERROR', detail: failed },
  { source: 'search', status: 'any', code: 'UPSTREAM_BAD_RESPONSE', detail: unexpected },
];

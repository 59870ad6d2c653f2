import { AppError, type AppErrorOptions } from '../errors/app-error.js';
import { retryAfterSeconds } from '../resilience/retry-after.js';
import { EventQueueLost } from './chat/chat-errors.js';
import { ChatEnvelope } from './chat/chat-schemas.js';
import { noAnswerOf } from './http/transport-errors.js';
import {
  SERVICE_NAME,
  UPSTREAM_FAILURES,
  type Facts,
  type FailureRow,
  type StatusMatch,
  type UpstreamSays,
  type UpstreamSource,
} from './upstream-failures.js';

/** An upstream's answer that is not the call's success. */
export interface FailedAnswer {
  source: UpstreamSource;
  /** The call, as the metrics' `operation` says it. */
  operation: string;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body, where the transport read it (the redirect proxy does not). */
  body?: Buffer;
  /** RETRY_AFTER_MAX_SECONDS. */
  retryAfterMaxSeconds: number;
  /**
   * Removes secrets from the upstream's text. The text is read only through it: without it no
   * message row matches and no message reaches a detail or a log.
   */
  scrub?: (text: string) => string;
}

/** A call that got no answer: `error` is what the transport threw. */
export interface NoAnswerCall {
  source: UpstreamSource;
  operation: string;
  error: unknown;
  deadlineMs: number;
  /** Whether the call's own deadline (or its caller's signal) ended it. */
  deadlinePassed: boolean;
}

export type FailedCall = FailedAnswer | NoAnswerCall;

const MAX_DETAIL = 500;

/** The errors whose row allows a retry: the transport asks, the browser never sees it. */
const retryable = new WeakSet<AppError>();

/** Whether an idempotent read may be sent again after `error` (its row's `retry`). */
export function isRetryable(error: unknown): boolean {
  return error instanceof AppError && retryable.has(error);
}

/** The one reading of the table: the contract's error for a failed call (contract section 3). */
export function toUpstreamError(call: FailedCall): AppError {
  const reading = readingOf(call);
  const row = failureRowOf(call, reading);
  const detail = row.detail(reading.facts());
  const options = optionsOf(row, call, reading);
  const error = row.queueLost
    ? new EventQueueLost(reading.queueId(), row.code, detail, options)
    : new AppError(row.code, detail, options);
  if (row.retry) retryable.add(error);
  return error;
}

/** Whose error it is, the Retry-After it passes on, and what the log gets as its cause. */
function optionsOf(row: FailureRow, call: FailedCall, reading: Reading): AppErrorOptions {
  const retryAfterSeconds = retryAfterOf(row, call, reading);
  const cause = 'error' in call ? call.error : row.causeFromBody ? reading.logText() : undefined;
  return {
    ...(row.gatewayOwn ? {} : { source: call.source }),
    ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
    ...(cause === undefined ? {} : { cause }),
  };
}

/** The row a failed call falls under: the first that matches (exported for the table's test). */
export function failureRowOf(call: FailedCall, reading = readingOf(call)): FailureRow {
  const status = 'error' in call ? noAnswerOf(call.error, call.deadlinePassed) : call.status;
  const row = UPSTREAM_FAILURES.find(
    (r) =>
      (r.source === 'any' || r.source === call.source) &&
      (r.operations === undefined || r.operations.includes(call.operation)) &&
      statusMatches(r.status, status) &&
      (r.upstream === undefined || reading.says(r.upstream)),
  );
  // Each source ends in a row for any status, and every NoAnswer has its row.
  if (row === undefined) throw new Error(`no upstream failure row for ${call.source} ${status}`);
  return row;
}

function statusMatches(match: StatusMatch, status: number | string): boolean {
  if (typeof match === 'number' || typeof match === 'string') {
    if (typeof status === 'string' || typeof match === 'number') return match === status;
    if (match === '4xx') return status >= 400 && status < 500;
    if (match === '5xx') return status >= 500;
    return match === 'any';
  }
  return typeof status === 'number' && match.includes(status);
}

function retryAfterOf(row: FailureRow, call: FailedCall, reading: Reading): number | undefined {
  if (row.retryAfter === undefined || typeof row.retryAfter === 'number') return row.retryAfter;
  if (!('status' in call)) return undefined;
  const header = call.headers['retry-after'];
  const fromBody = row.retryAfter === 'header-or-body' ? reading.bodyRetryAfter() : undefined;
  return retryAfterSeconds(header === undefined ? fromBody : header, {
    maxSeconds: call.retryAfterMaxSeconds,
  });
}

/** What the table may read of a failed call; the body is parsed once, and only if asked. */
interface Reading {
  says(upstream: UpstreamSays): boolean;
  facts(): Facts;
  queueId(): string;
  bodyRetryAfter(): number | undefined;
  /** The upstream's code and message for the log, scrubbed; undefined without an envelope. */
  logText(): Error | undefined;
}

function readingOf(call: FailedCall): Reading {
  let parsed: { json: unknown; envelope: ChatEnvelope | undefined } | undefined;
  const body = () => (parsed ??= parseBody('body' in call ? call.body : undefined));
  const scrub = 'scrub' in call ? call.scrub : undefined;
  const message = () => {
    // Without a scrubber the body is not even parsed: the search's bodies never are.
    const envelope = scrub && body().envelope;
    return envelope ? scrub(envelope.msg).slice(0, MAX_DETAIL) : '';
  };
  const field = (name: string) => {
    const { json } = body();
    return typeof json === 'object' && json !== null
      ? (json as Record<string, unknown>)[name]
      : undefined;
  };
  return {
    says: (upstream) => says(upstream, body().envelope, field, message),
    facts: () => ({
      service: SERVICE_NAME[call.source],
      status: 'status' in call ? call.status : 0,
      deadlineMs: 'deadlineMs' in call ? call.deadlineMs : 0,
      message: message(),
    }),
    queueId() {
      const id = field('queue_id');
      return typeof id === 'string' ? id : '';
    },
    bodyRetryAfter() {
      const seconds = field('retry-after');
      return typeof seconds === 'number' ? seconds : undefined;
    },
    logText() {
      const { envelope } = body();
      return envelope && scrub
        ? new Error(scrub(`${envelope.code ?? ''} ${envelope.msg}`))
        : undefined;
    },
  };
}

function says(
  upstream: UpstreamSays,
  envelope: ChatEnvelope | undefined,
  field: (name: string) => unknown,
  message: () => string,
): boolean {
  if (typeof upstream === 'object') {
    if ('code' in upstream) return field('code') === upstream.code;
    if (envelope?.result !== 'error') return false;
    return typeof upstream.msg === 'string'
      ? message() === upstream.msg
      : upstream.msg.test(message());
  }
  if (upstream === 'envelope') return envelope !== undefined;
  return (envelope?.result === 'error') === (upstream === 'error');
}

function parseBody(body: Buffer | undefined): {
  json: unknown;
  envelope: ChatEnvelope | undefined;
} {
  let json: unknown;
  try {
    json = body === undefined ? undefined : (JSON.parse(body.toString('utf8')) as unknown);
  } catch {
    json = undefined;
  }
  const envelope = ChatEnvelope.safeParse(json);
  return { json, envelope: envelope.success ? envelope.data : undefined };
}

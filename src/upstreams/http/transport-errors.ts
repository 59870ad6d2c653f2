import { errors } from 'undici';
import { AppError, type ErrorSource } from '../../errors/app-error.js';
import { nestsDeeperThan } from './json-depth.js';

export type UpstreamSource = Exclude<ErrorSource, 'gateway'>;

/** How error details name each upstream: never by URL, which may carry credentials. */
export const SERVICE_NAME: Record<UpstreamSource, string> = {
  chat: 'The chat service',
  search: 'The search service',
};

/** The gateway's own shortage (descriptors, memory): not a sign that the upstream is unwell. */
const LOCAL_RESOURCE_CODES = new Set(['EMFILE', 'ENFILE', 'ENOMEM', 'ENOBUFS', 'EADDRNOTAVAIL']);

/**
 * The one mapping of a failed exchange (nothing usable came back) to the contract's error:
 * past the deadline is 504, an oversized body or a refused, reset or unreachable upstream is
 * 502 (section 3), and a local resource shortage is the gateway's own 503.
 */
export function toTransportError(
  error: unknown,
  source: UpstreamSource,
  deadlineMs: number,
  deadlinePassed: boolean,
): AppError {
  if (error instanceof AppError) return error;
  const service = SERVICE_NAME[source];
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && LOCAL_RESOURCE_CODES.has(code)) {
    return new AppError('SERVICE_UNAVAILABLE', 'The gateway is short of resources; try again.', {
      retryAfterSeconds: 1,
      cause: error,
    });
  }
  if (error instanceof errors.ResponseExceededMaxSizeError) {
    return new AppError('UPSTREAM_BAD_RESPONSE', `${service} sent an oversized response.`, {
      source,
      cause: error,
    });
  }
  const timedOut =
    deadlinePassed ||
    error instanceof errors.ConnectTimeoutError ||
    error instanceof errors.HeadersTimeoutError ||
    error instanceof errors.BodyTimeoutError;
  if (timedOut) {
    return new AppError('UPSTREAM_TIMEOUT', `${service} did not answer within ${deadlineMs} ms.`, {
      source,
      cause: error,
    });
  }
  return new AppError('UPSTREAM_UNAVAILABLE', `${service} could not be reached.`, {
    source,
    cause: error,
  });
}

/** `application/json` or a `+json` type such as `application/ld+json`, parameters allowed. */
const JSON_MEDIA_TYPE = /^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i;

/**
 * Parses a JSON body, once. A body not labelled as JSON, not JSON, or nested deeper than
 * `maxDepth` (UPSTREAM_MAX_JSON_DEPTH) is the upstream's fault: a 502, never a 500 and never
 * passed on as if it were what was asked for (an HTML page around JSON is a broken proxy).
 */
export function parseJsonBody(
  response: { headers: Record<string, string | string[] | undefined>; body: Buffer },
  source: UpstreamSource,
  maxDepth: number,
): unknown {
  const type = response.headers['content-type'];
  if (typeof type !== 'string' || !JSON_MEDIA_TYPE.test(type)) {
    throw new AppError(
      'UPSTREAM_BAD_RESPONSE',
      `${SERVICE_NAME[source]} sent a response that is not labelled as JSON.`,
      { source },
    );
  }
  const { body } = response;
  if (nestsDeeperThan(body, maxDepth)) {
    throw new AppError(
      'UPSTREAM_BAD_RESPONSE',
      `${SERVICE_NAME[source]} sent a response nested deeper than ${maxDepth} levels.`,
      { source },
    );
  }
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch (error) {
    throw new AppError(
      'UPSTREAM_BAD_RESPONSE',
      `${SERVICE_NAME[source]} sent a response that is not JSON.`,
      { source, cause: error },
    );
  }
}

/** A body that breaks its schema: the upstream's fault, never a half-typed object. */
export function schemaBreach(source: UpstreamSource, detail: string, cause: unknown): AppError {
  return new AppError('UPSTREAM_BAD_RESPONSE', detail, { source, cause });
}

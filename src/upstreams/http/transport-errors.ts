import { errors } from 'undici';
import { AppError } from '../../errors/app-error.js';
import { SERVICE_NAME, type NoAnswer, type UpstreamSource } from '../upstream-failures.js';
import { nestsDeeperThan } from './json-depth.js';

/** The gateway's own shortage (descriptors, memory): not a sign that the upstream is unwell. */
const LOCAL_RESOURCE_CODES = new Set(['EMFILE', 'ENFILE', 'ENOMEM', 'ENOBUFS', 'EADDRNOTAVAIL']);

/**
 * Why a call got no answer, from what the transport threw: past the deadline, an oversized
 * body, a refused, reset or unreachable upstream, or a local resource shortage. Their errors
 * are upstream-failures.ts's rows.
 */
export function noAnswerOf(error: unknown, deadlinePassed: boolean): NoAnswer {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && LOCAL_RESOURCE_CODES.has(code)) return 'local-shortage';
  if (error instanceof errors.ResponseExceededMaxSizeError) return 'oversized';
  const timedOut =
    deadlinePassed ||
    error instanceof errors.ConnectTimeoutError ||
    error instanceof errors.HeadersTimeoutError ||
    error instanceof errors.BodyTimeoutError;
  return timedOut ? 'timeout' : 'unreachable';
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

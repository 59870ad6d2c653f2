import type { Dispatcher } from 'undici';
import { errors } from 'undici';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppError, type ErrorSource } from '../../errors/app-error.js';

export type UpstreamSource = Exclude<ErrorSource, 'gateway'>;

export interface UpstreamRequest {
  source: UpstreamSource;
  method: 'GET' | 'POST' | 'DELETE';
  /** Path and query, already encoded; the pool fixes the origin so no input can change host. */
  path: string;
  headers: Record<string, string>;
  body?: string;
  deadlineMs: number;
  /**
   * Idempotent reads may be retried once, on a refused or reset connection or a 502/503/504,
   * after a jittered pause, and only if enough of the deadline is left. Never set it for writes.
   */
  retry?: boolean;
}

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

const MAX_BODY_BYTES = 8 * 1024 * 1024;

export const SERVICE_NAME: Record<UpstreamSource, string> = {
  chat: 'The chat service',
  search: 'The search service',
};

/**
 * One request with a hard deadline covering connect, headers and the whole body. Redirects
 * are never followed (a Pool has no redirect interceptor). Whatever goes wrong becomes an
 * AppError whose detail names the service but never its URL or credentials.
 */
export async function sendUpstream(
  pool: Dispatcher,
  request: UpstreamRequest,
): Promise<UpstreamResponse> {
  // One deadline for the whole call, retry included: the browser's wait is bounded by it.
  const signal = AbortSignal.timeout(request.deadlineMs);
  const deadline = Date.now() + request.deadlineMs;
  const retryPause = () => {
    const pause = RETRY_PAUSE_MS.min + Math.random() * (RETRY_PAUSE_MS.max - RETRY_PAUSE_MS.min);
    return deadline - Date.now() - pause >= Math.min(RETRY_MIN_LEFT_MS, request.deadlineMs / 2)
      ? pause
      : undefined;
  };
  for (let attempt = 0; ; attempt += 1) {
    const mayRetry = request.retry === true && attempt === 0;
    let response: UpstreamResponse;
    try {
      response = await sendOnce(pool, request, signal);
    } catch (error) {
      const failure = toTransportError(error, request, signal);
      const pause = mayRetry && failure.code === 'UPSTREAM_UNAVAILABLE' ? retryPause() : undefined;
      if (pause === undefined) throw failure;
      await sleep(pause);
      continue;
    }
    const pause = mayRetry && RETRYABLE_STATUS.has(response.status) ? retryPause() : undefined;
    if (pause === undefined) return response;
    await sleep(pause);
  }
}

const RETRYABLE_STATUS = new Set([502, 503, 504]);
const RETRY_PAUSE_MS = { min: 25, max: 100 };
/** A retry is only worth it with this much of the deadline left after the pause. */
const RETRY_MIN_LEFT_MS = 250;

async function sendOnce(
  pool: Dispatcher,
  request: UpstreamRequest,
  signal: AbortSignal,
): Promise<UpstreamResponse> {
  const response = await pool.request({
    method: request.method,
    path: request.path,
    headers: request.headers,
    body: request.body ?? null,
    signal,
  });
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      response.body.destroy();
      throw new AppError(
        'UPSTREAM_BAD_RESPONSE',
        `${SERVICE_NAME[request.source]} sent an oversized response.`,
        {
          source: request.source,
        },
      );
    }
    chunks.push(chunk);
  }
  return {
    status: response.statusCode,
    headers: response.headers,
    body: Buffer.concat(chunks).toString('utf8'),
  };
}

function toTransportError(error: unknown, request: UpstreamRequest, signal: AbortSignal): AppError {
  if (error instanceof AppError) return error;
  const service = SERVICE_NAME[request.source];
  const timedOut =
    signal.aborted ||
    error instanceof errors.ConnectTimeoutError ||
    error instanceof errors.HeadersTimeoutError ||
    error instanceof errors.BodyTimeoutError;
  if (timedOut) {
    return new AppError(
      'UPSTREAM_TIMEOUT',
      `${service} did not answer within ${request.deadlineMs} ms.`,
      {
        source: request.source,
        cause: error,
      },
    );
  }
  return new AppError('UPSTREAM_UNAVAILABLE', `${service} could not be reached.`, {
    source: request.source,
    cause: error,
  });
}

/** Parses a JSON body; anything else is the upstream's fault. */
export function parseJsonBody(response: UpstreamResponse, source: UpstreamSource): unknown {
  try {
    return JSON.parse(response.body) as unknown;
  } catch (error) {
    throw new AppError(
      'UPSTREAM_BAD_RESPONSE',
      `${SERVICE_NAME[source]} sent a response that is not JSON.`,
      {
        source,
        cause: error,
      },
    );
  }
}

/** `Retry-After` as whole seconds (RFC 9110 allows seconds or an HTTP-date); 1 when absent. */
export function retryAfterSeconds(
  header: string | string[] | undefined,
  now: number = Date.now(),
): number {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return 1;
  if (/^\s*\d+\s*$/.test(value)) return Number(value.trim());
  const date = Date.parse(value);
  return Number.isNaN(date) ? 1 : Math.max(0, Math.ceil((date - now) / 1000));
}

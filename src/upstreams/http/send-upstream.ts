import type { Dispatcher } from 'undici';
import { errors } from 'undici';
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
  const signal = AbortSignal.timeout(request.deadlineMs);
  try {
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
  } catch (error) {
    throw toTransportError(error, request, signal);
  }
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

import { Pool } from 'undici';

export interface UpstreamPoolOptions {
  /** The upstream's origin (scheme, host, port); paths are given per request. */
  origin: string;
  connectTimeoutMs: number;
  connections?: number;
}

/**
 * One keep-alive connection pool per upstream. undici's own header and body timeouts default
 * to 300 s; each request carries its own deadline (sendUpstream), and these are backstops at
 * the same length so no socket outlives it.
 */
export function createUpstreamPool(options: UpstreamPoolOptions & { deadlineMs: number }): Pool {
  return new Pool(options.origin, {
    connections: options.connections ?? 64,
    connect: { timeout: options.connectTimeoutMs },
    headersTimeout: options.deadlineMs,
    bodyTimeout: options.deadlineMs,
    keepAliveTimeout: 4_000,
  });
}

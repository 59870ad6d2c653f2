import { AppError } from '../../errors/app-error.js';
import { retryAfterSeconds } from '../../resilience/retry-after.js';
import type { UpstreamSource } from './transport-errors.js';

/*
 * What an upstream's HTTP status means, where the status alone says it, for the chat client,
 * the search client and the redirect proxy alike (issue 19, item 1). Each adds only what is its
 * own: which 4xx are the caller's (the redirect's link, chat's documented messages) and whose
 * credentials a 401 refused. The codes' effects (breaker, stale answers, metrics) are
 * errors/upstream-failure.ts's table.
 */

/** How answers name the service (the chat server's texts have said "server" since v1). */
const PEER: Record<UpstreamSource, string> = {
  chat: 'The chat server',
  search: 'The search service',
};

/** 429: the service throttles the gateway; its Retry-After (capped) goes to the caller. */
export function rateLimitedBy(
  source: UpstreamSource,
  retryAfter: string | number | readonly string[] | undefined,
  maxSeconds: number,
): AppError {
  return new AppError(
    'RATE_LIMITED',
    `${PEER[source]} is rate limiting requests; try again later.`,
    {
      source,
      retryAfterSeconds: retryAfterSeconds(retryAfter, { maxSeconds }),
    },
  );
}

/** 5xx: the service failed. */
export function failedWith(source: UpstreamSource, status: number): AppError {
  return new AppError('UPSTREAM_ERROR', `${PEER[source]} failed (HTTP ${status}).`, { source });
}

/** A status its document does not give this call. */
export function unexpectedStatus(source: UpstreamSource, status: number): AppError {
  return new AppError(
    'UPSTREAM_BAD_RESPONSE',
    `${PEER[source]} answered with unexpected HTTP ${status}.`,
    { source },
  );
}

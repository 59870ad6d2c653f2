import { isAppError, type AppError, type ErrorCode } from './app-error.js';
import { statusOf } from './to-problem.js';

/** What a failure of an upstream call does to the breaker, and what the metrics call it. */
interface UpstreamFailure {
  /**
   * `fault`: the service is unhealthy, and its circuit breaker counts it. `refusal`
   * (throttling, an open circuit, our credentials refused): the breaker does not, but like a
   * fault it may be answered from a stale cache entry.
   */
  readonly breaker: 'fault' | 'refusal';
  /** The `outcome` label of gateway_upstream_request_duration_seconds. */
  readonly outcome: string;
}

/**
 * The one definition of "an upstream failed" (as opposed to: it refused the caller's input, or
 * the gateway itself failed), for errors whose source is an upstream. How an upstream's answer
 * becomes one of these codes is the table in upstreams/upstream-failures.ts; each code's breaker
 * effect and metrics outcome are here, below the cache, which reads them too.
 */
const UPSTREAM_FAILURES: Partial<Record<ErrorCode, UpstreamFailure>> = {
  UPSTREAM_UNAVAILABLE: { breaker: 'fault', outcome: 'unavailable' },
  UPSTREAM_TIMEOUT: { breaker: 'fault', outcome: 'timeout' },
  UPSTREAM_ERROR: { breaker: 'fault', outcome: 'error' },
  UPSTREAM_BAD_RESPONSE: { breaker: 'fault', outcome: 'bad_response' },
  UPSTREAM_AUTH_FAILED: { breaker: 'refusal', outcome: 'auth_failed' },
  RATE_LIMITED: { breaker: 'refusal', outcome: 'rate_limited' },
  SERVICE_UNAVAILABLE: { breaker: 'refusal', outcome: 'circuit_open' },
};

function failureOf(error: unknown): UpstreamFailure | undefined {
  return isAppError(error) && error.source !== 'gateway'
    ? UPSTREAM_FAILURES[error.code]
    : undefined;
}

/** Any upstream failure: a stale entry may stand in for the answer. */
export function isUpstreamFailure(error: unknown): error is AppError {
  return failureOf(error) !== undefined;
}

/** A failure that says the upstream is unhealthy: its breaker counts it. */
export function isUpstreamFault(error: unknown): error is AppError {
  return failureOf(error)?.breaker === 'fault';
}

/**
 * What became of an upstream call that did not succeed, as the `outcome` label says it
 * (docs/operations.md lists them): an upstream failure's own label; `client_error` when the
 * upstream refused the caller's input; `local_error` when the gateway itself failed.
 */
export function upstreamOutcome(error: unknown): string {
  const failure = failureOf(error);
  if (failure) return failure.outcome;
  return isAppError(error) && statusOf(error.code) < 500 ? 'client_error' : 'local_error';
}

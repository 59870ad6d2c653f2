import { isAppError, type AppError, type ErrorCode } from './app-error.js';

/**
 * The one definition of "an upstream failed" (as opposed to: it refused the caller's input, or
 * the gateway itself failed). `fault` failures say the service is unhealthy and count against
 * its circuit breaker; `refusal` failures (throttling, an open circuit, our credentials
 * refused) do not, but like faults they may be answered from a stale cache entry.
 */
const UPSTREAM_FAILURES: Partial<Record<ErrorCode, 'fault' | 'refusal'>> = {
  UPSTREAM_UNAVAILABLE: 'fault',
  UPSTREAM_TIMEOUT: 'fault',
  UPSTREAM_ERROR: 'fault',
  UPSTREAM_BAD_RESPONSE: 'fault',
  UPSTREAM_AUTH_FAILED: 'refusal',
  RATE_LIMITED: 'refusal',
  SERVICE_UNAVAILABLE: 'refusal',
};

/** Any upstream failure: a stale entry may stand in for the answer. */
export function isUpstreamFailure(error: unknown): error is AppError {
  return (
    isAppError(error) && error.source !== 'gateway' && UPSTREAM_FAILURES[error.code] !== undefined
  );
}

/** A failure that says the upstream is unhealthy: its breaker counts it. */
export function isUpstreamFault(error: unknown): error is AppError {
  return isUpstreamFailure(error) && UPSTREAM_FAILURES[error.code] === 'fault';
}

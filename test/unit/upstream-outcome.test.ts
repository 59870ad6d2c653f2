import { describe, expect, it } from 'vitest';
import { AppError, ERROR_CODES, ERROR_SOURCES } from '../../src/errors/app-error.js';
import {
  isUpstreamFailure,
  isUpstreamFault,
  upstreamOutcome as outcomeOf,
} from '../../src/errors/upstream-failure.js';

/*
 * The upstream-failure table (issue 19, item 1): for every error code and source, what the
 * upstream metrics call it, whether a stale entry may stand in, and whether the breaker counts
 * it. Written out by hand, so a change to the table shows here.
 */

const UPSTREAM: Record<string, [outcome: string, failure: 'fault' | 'refusal']> = {
  UPSTREAM_UNAVAILABLE: ['unavailable', 'fault'],
  UPSTREAM_TIMEOUT: ['timeout', 'fault'],
  UPSTREAM_ERROR: ['error', 'fault'],
  UPSTREAM_BAD_RESPONSE: ['bad_response', 'fault'],
  UPSTREAM_AUTH_FAILED: ['auth_failed', 'refusal'],
  RATE_LIMITED: ['rate_limited', 'refusal'],
  SERVICE_UNAVAILABLE: ['circuit_open', 'refusal'],
};
const SERVER_ERRORS = new Set(['INTERNAL']);

describe('the upstream-failure table', () => {
  const cases = ERROR_CODES.flatMap((code) =>
    ERROR_SOURCES.map((source) => [code, source] as const),
  );
  it.each(cases)(
    'when a call ends in %s from %s, then its outcome, stale rule and breaker rule follow the table',
    (code, source) => {
      const error = new AppError(code, 'x', { source });
      const row = source === 'gateway' ? undefined : UPSTREAM[code];
      const expected =
        row?.[0] ??
        (SERVER_ERRORS.has(code) || code.startsWith('UPSTREAM_') || code === 'SERVICE_UNAVAILABLE'
          ? 'local_error'
          : 'client_error');
      expect(outcomeOf(error)).toBe(expected);
      expect(isUpstreamFailure(error)).toBe(row !== undefined);
      expect(isUpstreamFault(error)).toBe(row?.[1] === 'fault');
    },
  );

  it('when something that is not of the error family ends a call, then it is a local_error', () => {
    expect(outcomeOf(new TypeError('boom'))).toBe('local_error');
  });
});

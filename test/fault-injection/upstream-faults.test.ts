import { describe, expect, it } from 'vitest';
import {
  SCENARIO_TIMEOUT_MS,
  TEST_SCALE,
  describeRun,
  expectContractKept,
  malformedUpstream,
  resettingUpstream,
  slowUpstream,
  startedBetween,
  useChaosEnvironment,
} from './harness.js';

const env = useChaosEnvironment();

describe('the search upstream misbehaves under load', () => {
  it(
    'when the search service is slower than its deadline for a while, then callers get 504s, 503s or stale answers, never a hang, and fresh answers return after',
    async () => {
      const result = await slowUpstream(env(), TEST_SCALE);
      expectContractKept(result);
      const during = startedBetween(result, 'fault on', 'fault off');
      expect(
        during.filter((a) => a.status === 504 || a.status === 503).length,
        describeRun(result),
      ).toBeGreaterThan(0);
    },
    SCENARIO_TIMEOUT_MS,
  );

  it(
    'when the search service resets connections, then callers get 502s, 503s or stale answers, and fresh answers return after',
    async () => {
      const result = await resettingUpstream(env(), TEST_SCALE);
      expectContractKept(result);
      expect(result.summary.byStatus['502'] ?? 0, describeRun(result)).toBeGreaterThan(0);
    },
    SCENARIO_TIMEOUT_MS,
  );

  it(
    'when the search service sends HTML, truncated or schema-breaking bodies, then callers get 502s, 503s or stale answers, never a half-read success',
    async () => {
      const result = await malformedUpstream(env(), TEST_SCALE);
      expectContractKept(result);
      expect(result.summary.byStatus['502'] ?? 0, describeRun(result)).toBeGreaterThan(0);
    },
    SCENARIO_TIMEOUT_MS,
  );
});

import { describe, expect, it } from 'vitest';
import {
  describeRun,
  expectContractKept,
  SCENARIO_TIMEOUT_MS,
  slowUpstream,
  startedBetween,
  TEST_SCALE,
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
});

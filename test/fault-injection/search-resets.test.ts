import { describe, expect, it } from 'vitest';
import {
  describeRun,
  expectContractKept,
  resettingUpstream,
  SCENARIO_TIMEOUT_MS,
  TEST_SCALE,
  useChaosEnvironment,
} from './harness.js';

const env = useChaosEnvironment();

describe('the search upstream misbehaves under load', () => {
  it(
    'when the search service resets connections, then callers get 502s, 503s or stale answers, and fresh answers return after',
    async () => {
      const result = await resettingUpstream(env(), TEST_SCALE);
      expectContractKept(result);
      expect(result.summary.byStatus['502'] ?? 0, describeRun(result)).toBeGreaterThan(0);
    },
    SCENARIO_TIMEOUT_MS,
  );
});

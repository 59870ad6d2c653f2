import { describe, expect, it } from 'vitest';
import {
  describeRun,
  expectContractKept,
  malformedUpstream,
  SCENARIO_TIMEOUT_MS,
  TEST_SCALE,
  useChaosEnvironment,
} from './harness.js';

const env = useChaosEnvironment();

describe('the search upstream misbehaves under load', () => {
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

import { describe, expect, it } from 'vitest';
import {
  HOT_PATHS,
  SCENARIO_TIMEOUT_MS,
  TEST_SCALE,
  describeRun,
  expectContractKept,
  redisOutage,
  startedBetween,
  useChaosEnvironment,
} from './harness.js';

const env = useChaosEnvironment();

describe('Redis goes away under load', () => {
  it(
    'when Redis is SIGKILLed mid-load and restarted on its port, then every request is still answered from the upstream, readiness says degraded, and entries are written to Redis again',
    async () => {
      const result = await redisOutage(env(), TEST_SCALE);
      const context = `${describeRun(result)}\nfacts: ${JSON.stringify(result.facts)}`;
      expectContractKept(result);
      // Healthy upstream: nothing may fail because Redis did (the judge allowed no error at all).
      expect(Object.keys(result.summary.byStatus), context).toEqual(['200']);
      expect(result.facts['keysBeforeKill'], context).toBeGreaterThanOrEqual(HOT_PATHS.length);

      const away = startedBetween(result, 'redis killed', 'redis restarted');
      expect(away.length, context).toBeGreaterThan(0);
      expect(
        away.every((a) => a.status === 200),
        context,
      ).toBe(true);
      expect(
        away.some((a) => a.cache === 'MISS'),
        context,
      ).toBe(true);
      const callsWhileAway = result.facts['callsAtRestart']! - result.facts['callsAtKill']!;
      expect(callsWhileAway, context).toBeGreaterThan(0);
      const { 'redis killed': killed = 0, 'redis restarted': restarted = 0 } = result.marks;
      const probes = result.readiness.filter((s) => s.at > killed && s.at < restarted);
      expect(
        probes.some((s) => s.status === 200 && s.cache === 'degraded'),
        context,
      ).toBe(true);

      // The restarted Redis started empty: these keys were written after it came back.
      expect(result.facts['keysAfterRestart'], context).toBeGreaterThan(0);
      expect(result.finalReadiness, context).toMatchObject({ status: 200, cache: 'ok' });
    },
    SCENARIO_TIMEOUT_MS,
  );
});

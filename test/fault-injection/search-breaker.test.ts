import { Agent } from 'undici';
import { describe, expect, it } from 'vitest';
import {
  BREAKER_OPEN,
  SCENARIO_TIMEOUT_MS,
  TEST_SCALE,
  coldPath,
  describeRun,
  expectContractKept,
  failingUpstream,
  readinessSample,
  searchJudge,
  send,
  startGatewayProcess,
  startedBetween,
  useChaosEnvironment,
} from './harness.js';

/*
 * The search circuit breaker under load. Each scenario of the search service misbehaving has a
 * file of its own (search-slow, search-resets, search-malformed, this one): vitest starts the
 * largest files first when it has no timings (a fresh clone), so short files of long scenarios
 * would otherwise all run last, on one worker, after the other has finished.
 */

const env = useChaosEnvironment();

describe('the search upstream fails under load', () => {
  it(
    'when the search service answers 5xx for about a second, then the circuit opens (503 with Retry-After, stale answers) and closes again without a restart',
    async () => {
      const result = await failingUpstream(env(), TEST_SCALE);
      expectContractKept(result);
      const context = describeRun(result);
      expect(
        result.readiness.some((s) => s.searchCircuit === 'open'),
        context,
      ).toBe(true);
      const during = startedBetween(result, 'fault on', 'fault off');
      // Fast failures while open: the judge checked each has the envelope and Retry-After.
      expect(during.filter((a) => a.status === 503).length, context).toBeGreaterThan(0);
      expect(during.filter((a) => a.cache === 'STALE').length, context).toBeGreaterThan(0);
    },
    SCENARIO_TIMEOUT_MS,
  );
});

describe('the circuit while its probe is in flight', () => {
  it(
    'when the circuit is half-open and its one probe is still running, then the other callers get 503 with a Retry-After of at least 1 second',
    async () => {
      const chaos = env();
      chaos.reset();
      const gateway = await startGatewayProcess({
        upstreams: chaos.endpoints,
        redisUrl: chaos.redis.url,
        // Info level: the breaker's half-open transition is an info line to wait on.
        env: { SEARCH_TIMEOUT_MS: '3000', LOG_LEVEL: 'info' },
      });
      const agent = new Agent({ connections: 4 });
      try {
        const judge = searchJudge(chaos, { 502: ['UPSTREAM_ERROR'], ...BREAKER_OPEN });
        const get = (n: number) =>
          send(agent, gateway.url, coldPath(n), { timeoutMs: 10_000, judge });
        chaos.search.faults.add({ fault: { kind: 'status', status: 500 } });
        let n = 0;
        let open = await get(n++);
        while (open.status !== 503 && n < 20) open = await get(n++);
        expect(open).toMatchObject({ status: 503, retryAfter: '1', violation: undefined });

        // The upstream is healthy again but slow, so the probe stays in flight for a while.
        chaos.search.faults.clear();
        chaos.search.faults.add({ fault: { kind: 'delay', ms: 1500 } });
        await gateway.waitForLog(/circuit search half-open/, 5000);
        expect((await readinessSample(gateway.url, 0, agent)).searchCircuit).toBe('half-open');
        const probePath = coldPath(n);
        const probe = get(n++);
        // The probe is at the search service (and held there by the delay) before the next call.
        await chaos.search.received((r) => probePath.endsWith(r.url.slice('/v1/search'.length)));
        const other = await get(n++);

        expect(other.status).toBe(503);
        expect(other.violation).toBeUndefined();
        expect(
          Number(other.retryAfter),
          `Retry-After of a 503 while the probe runs: ${other.retryAfter}`,
        ).toBeGreaterThanOrEqual(1);
        expect((await probe).status).toBe(200);
      } finally {
        await agent.close();
        await gateway.dispose();
        chaos.reset();
      }
    },
    SCENARIO_TIMEOUT_MS,
  );
});

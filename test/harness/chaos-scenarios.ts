import type { Fault } from '../../simulators/sim-faults.js';
import { eventually } from '../helpers/eventually.js';
import { BREAKER_OPEN, TIMEOUT_ERRORS } from './chaos-contract.js';
import {
  recover,
  rotateFaults,
  searchJudge,
  searchKeys,
  type ChaosEnvironment,
} from './chaos-environment.js';
import { runLoadScenario, type Scale, type Step } from './chaos-scenario-runner.js';

/*
 * The fault-injection scenarios, shared by test/fault-injection (small scale, assertions) and
 * `npm run chaos` (larger scale, a table): four ways the search service misbehaves for a while,
 * and Redis dying mid-load.
 */

/** The fault is on from 25 % to 60 % of the run; the rest is healthy traffic. */
function faultWindow(env: ChaosEnvironment, install: () => void): Step[] {
  return [
    { at: 0.25, name: 'fault on', action: install },
    { at: 0.6, name: 'fault off', action: () => env.search.faults.clear() },
  ];
}

export function slowUpstream(env: ChaosEnvironment, scale: Scale) {
  // The chaos gateways' own 3 s deadline, against a 4 s delay. A 500 ms deadline here also
  // timed out the warm-up of a freshly started gateway on a loaded machine, before any fault.
  const delay: Fault = { kind: 'delay', ms: 4000 };
  return runLoadScenario(env, scale, {
    name: 'search slower than its deadline (4 s vs 3 s)',
    allowedErrors: { ...TIMEOUT_ERRORS, ...BREAKER_OPEN },
    steps: () =>
      faultWindow(env, () => env.search.faults.add({ fault: delay, pathPrefix: '/v1/search' })),
  });
}

export function resettingUpstream(env: ChaosEnvironment, scale: Scale) {
  return runLoadScenario(env, scale, {
    name: 'search resets connections',
    allowedErrors: { 502: ['UPSTREAM_UNAVAILABLE'], ...BREAKER_OPEN },
    steps: () =>
      faultWindow(env, () =>
        env.search.faults.add({ fault: { kind: 'reset' }, pathPrefix: '/v1/search' }),
      ),
  });
}

export function failingUpstream(env: ChaosEnvironment, scale: Scale) {
  const statuses = [500, 503, 502].map((status): Fault => ({ kind: 'status', status }));
  return runLoadScenario(env, scale, {
    name: 'search answers 5xx, then recovers',
    allowedErrors: { 502: ['UPSTREAM_ERROR'], ...BREAKER_OPEN },
    steps: () => faultWindow(env, () => rotateFaults(env, statuses)),
  });
}

export function malformedUpstream(env: ChaosEnvironment, scale: Scale) {
  const bodies: Fault[] = [
    { kind: 'malformed' },
    { kind: 'truncated' },
    // JSON, but not a ResultList.
    { kind: 'status', status: 200, body: '{"itemListElement":"none","itemScore":[]}' },
  ];
  return runLoadScenario(env, scale, {
    name: 'search sends malformed bodies (HTML, truncated, schema-breaking)',
    allowedErrors: { 502: ['UPSTREAM_BAD_RESPONSE', 'UPSTREAM_UNAVAILABLE'], ...BREAKER_OPEN },
    steps: () => faultWindow(env, () => rotateFaults(env, bodies)),
  });
}

/**
 * Redis is SIGKILLed at 25 % of the run and started again, empty, on the same port at 55 %.
 * Upstream stays healthy: no request may fail. Afterwards the gateway must write to it again.
 */
export function redisOutage(env: ChaosEnvironment, scale: Scale) {
  return runLoadScenario(env, scale, {
    name: 'Redis SIGKILLed mid-load, then restarted',
    allowedErrors: {},
    steps: (gateway, facts) => [
      {
        at: 0.25,
        name: 'redis killed',
        action: async () => {
          facts['keysBeforeKill'] = (await searchKeys(env.redis.url, gateway.prefix)).length;
          await env.redis.kill();
          facts['callsAtKill'] = env.searchCalls();
        },
      },
      {
        at: 0.55,
        name: 'redis restarted',
        action: async () => {
          facts['callsAtRestart'] = env.searchCalls();
          await env.redis.restart();
        },
      },
    ],
    async after(gateway, facts) {
      // The restarted Redis is empty: any search key under the prefix was written after it.
      // Fresh requests until one is stored (the gateway reconnects in its own time); a run
      // that stores none reports 0, and the test says so.
      let n = scale.maxRequests + 100;
      let keys: string[] = [];
      const judge = searchJudge(env, {});
      await eventually(
        async () => {
          keys = await searchKeys(env.redis.url, gateway.prefix);
          if (keys.length > 0) return true;
          await recover(gateway.url, judge, { firstN: n, attempts: 1 });
          n += 1;
          return false;
        },
        { what: 'a search entry written to the restarted Redis', timeoutMs: 6000, intervalMs: 250 },
      ).catch(() => undefined);
      facts['keysAfterRestart'] = keys.length;
    },
  });
}

export const LOAD_SCENARIOS = [
  slowUpstream,
  resettingUpstream,
  failingUpstream,
  malformedUpstream,
  redisOutage,
] as const;

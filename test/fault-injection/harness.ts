import { afterAll, beforeAll, expect } from 'vitest';
import { formatStatuses } from '../harness/chaos-contract.js';
import {
  createChaosEnvironment,
  HOT_PATHS,
  type ChaosEnvironment,
} from '../harness/chaos-environment.js';
import type { Answer } from '../harness/chaos-load.js';
import type { LoadScenarioResult } from '../harness/chaos-scenario-runner.js';

/*
 * The fault-injection tests run the production build (`node dist/src/main.js`) against the
 * simulators in this process and a private redis-server, under load from this process. The
 * process, Redis and load machinery lives in bench/ (compiled for `npm run chaos`, which runs
 * the same scenarios larger); this module adds what only the tests need.
 */

export * from '../harness/chaos-contract.js';
export * from '../harness/chaos-environment.js';
export * from '../harness/chaos-gateway-process.js';
export * from '../harness/chaos-load.js';
export * from '../harness/chaos-processes.js';
export * from '../harness/chaos-scenario-runner.js';
export * from '../harness/chaos-scenarios.js';
export * from '../harness/chaos-stop.js';

/** Start-up, warm-up, the load, recovery and the stop, with room for a noisy 2-core machine. */
export const SCENARIO_TIMEOUT_MS = 40_000;

/** Simulators and a private Redis for one test file, closed after it. */
export function useChaosEnvironment(): () => ChaosEnvironment {
  let env: ChaosEnvironment | undefined;
  beforeAll(async () => {
    env = await createChaosEnvironment();
  });
  afterAll(async () => {
    await env?.close();
  });
  return () => {
    if (env === undefined) throw new Error('the chaos environment is not started');
    return env;
  };
}

/** The end of a gateway's log without the readiness probes' lines (draining logs each 503). */
export function logTail(output: string, chars = 1500): string {
  const lines = output.split('\n').filter((line) => !line.includes('"url":"/readyz"'));
  return lines.join('\n').slice(-chars);
}

/** What a failing assertion prints, so the run can be read without re-running it. */
export function describeRun(result: LoadScenarioResult): string {
  const last = result.recovery.at(-1);
  return [
    `${result.name}: ${result.summary.requests} requests, ${formatStatuses(result.summary.byStatus)}`,
    `stale ${result.summary.stale}, upstream calls ${result.upstreamCalls} (budget ${result.callBudget})`,
    `warm-up calls ${result.warm.upstreamCalls}, recovery ${last?.status ?? last?.error}`,
    `violations: ${result.summary.violations.slice(0, 5).join('; ') || 'none'}`,
    `gateway log tail: ${logTail(result.gatewayOutput)}`,
  ].join('\n');
}

const violations = (answers: readonly Answer[]) =>
  answers.filter((a) => a.violation !== undefined).map((a) => `${a.path}: ${a.violation}`);

/**
 * What every load scenario must show: the warm-up made one upstream call per hot key (single
 * flight) and answered correctly; every request got an answer that keeps the contract; upstream
 * calls stayed within two per request that was not a cache hit; afterwards fresh requests are
 * answered 200 again, without a restart, and readiness never said "not ready".
 */
export function expectContractKept(result: LoadScenarioResult): void {
  const context = describeRun(result);
  expect(violations(result.warm.answers), context).toEqual([]);
  expect(result.warm.upstreamCalls, context).toBe(HOT_PATHS.length);
  expect(result.summary.clientErrors, context).toBe(0);
  expect(result.summary.violations, context).toEqual([]);
  expect(result.upstreamCalls, context).toBeLessThanOrEqual(result.callBudget);
  expect(result.recovery.at(-1)?.status, context).toBe(200);
  expect(result.recovery.at(-1)?.cache, context).toBe('MISS');
  expect(violations(result.recovery), context).toEqual([]);
  expect(
    result.confirmation.map((a) => a.status),
    context,
  ).toEqual(result.confirmation.map(() => 200));
  expect(violations(result.confirmation), context).toEqual([]);
  expect(result.readiness.length, context).toBeGreaterThan(0);
  expect(
    result.readiness.filter((s) => s.status !== 200),
    context,
  ).toEqual([]);
  expect(result.finalReadiness, context).toMatchObject({ status: 200, searchCircuit: 'closed' });
}

/** Answers that started while a fault was on (between two timeline marks). */
export function startedBetween(result: LoadScenarioResult, from: string, to: string): Answer[] {
  const start = result.marks[from] ?? Number.POSITIVE_INFINITY;
  const end = result.marks[to] ?? Number.POSITIVE_INFINITY;
  return result.answers.filter((a) => a.at >= start && a.at < end);
}

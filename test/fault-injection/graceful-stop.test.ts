import { beforeAll, describe, expect, it } from 'vitest';
import {
  EXIT_MARGIN_MS,
  SCENARIO_TIMEOUT_MS,
  forcedStop,
  gracefulStop,
  logTail,
  useChaosEnvironment,
  type StopResult,
} from './harness.js';

const env = useChaosEnvironment();
const IN_FLIGHT = 12;

function describeStop(result: StopResult): string {
  const probes = result.readiness.map((s) => `${Math.round(s.at)}ms:${s.status ?? 'none'}`);
  return [
    `${result.name}: exit ${JSON.stringify(result.exit)} after ${Math.round(result.msToExit)} ms`,
    `answers: ${result.answers.map((a) => `${a.status ?? a.error} (Connection: ${a.connection})`).join(' ')}`,
    `readyz after SIGTERM: ${probes.join(' ')}`,
    `gateway log tail: ${logTail(result.gatewayOutput)}`,
  ].join('\n');
}

describe('SIGTERM while requests are in flight (the upstream takes 1 s)', () => {
  let result: StopResult;
  beforeAll(async () => {
    result = await gracefulStop(env(), IN_FLIGHT);
  }, SCENARIO_TIMEOUT_MS);

  it('when the signal arrives, then /readyz turns 503 draining before the listener closes, and stays so', () => {
    const context = describeStop(result);
    const first = result.readiness.findIndex((s) => s.status === 503);
    expect(first, context).toBeGreaterThanOrEqual(0);
    expect(result.readiness[first]!.state, context).toBe('draining');
    expect(result.readiness[first]!.at, context).toBeLessThan(result.options.drainDelayMs);
    const after = result.readiness.slice(first).map((s) => s.status);
    expect(
      after.every((status) => status === 503 || status === undefined),
      context,
    ).toBe(true);
  });

  it('when it drains, then every request in flight completes with a full, correct answer', () => {
    const context = describeStop(result);
    expect(result.inFlightAtSignal, context).toBe(IN_FLIGHT);
    expect(
      result.answers.map((a) => a.status),
      context,
    ).toEqual(result.answers.map(() => 200));
    expect(result.summary.violations, context).toEqual([]);
    expect(
      result.answers.every((a) => a.cache === 'MISS'),
      context,
    ).toBe(true);
  });

  it('when the requests have finished, then the process exits 0 before SHUTDOWN_TIMEOUT_MS', () => {
    const context = describeStop(result);
    expect(result.exit?.code, context).toBe(0);
    expect(result.msToExit, context).toBeLessThan(result.options.shutdownTimeoutMs);
  });
});

describe('SIGTERM while requests hang past SHUTDOWN_TIMEOUT_MS', () => {
  let result: StopResult;
  beforeAll(async () => {
    result = await forcedStop(env(), 4);
  }, SCENARIO_TIMEOUT_MS);

  it('when the deadline passes, then the connections are cut (no answer passes for a success) and the exit code is 1', () => {
    const context = describeStop(result);
    expect(
      result.answers.map((a) => a.status),
      context,
    ).toEqual(result.answers.map(() => undefined));
    expect(result.exit?.code, context).toBe(1);
  });

  it('when the deadline passes, then the process is gone soon after it, not when the upstream calls time out', () => {
    const context = describeStop(result);
    expect(result.exit, context).toBeDefined();
    expect(result.msToExit, context).toBeLessThan(
      result.options.shutdownTimeoutMs + EXIT_MARGIN_MS,
    );
  });
});

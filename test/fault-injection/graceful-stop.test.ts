import { beforeAll, describe, expect, it } from 'vitest';
import {
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
    // The order, not the time: the 503 came before the listener closed (the first probe no
    // longer answered), and until it came every probe was answered ready.
    const closed = result.readiness.findIndex((s) => s.status === undefined);
    expect(closed === -1 || first < closed, context).toBe(true);
    expect(
      result.readiness.slice(0, first).map((s) => s.status),
      context,
    ).toEqual(result.readiness.slice(0, first).map(() => 200));
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
    // Exit code 0 is the stop's own verdict that draining won its race with SHUTDOWN_TIMEOUT_MS
    // (a forced stop exits 1); and every answer was in before the process was gone.
    expect(result.exit?.code, context).toBe(0);
    expect(result.settledBeforeExit, context).toBe(IN_FLIGHT);
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
    // It exited by itself (we SIGKILL only well past SHUTDOWN_TIMEOUT_MS), while its upstream
    // calls, whose deadline is far later still, were hanging: it did not wait for them.
    expect(result.exit, context).toBeDefined();
    expect(result.options.searchTimeoutMs, context).toBeGreaterThan(
      result.options.shutdownTimeoutMs + result.options.exitGraceMs,
    );
  });
});

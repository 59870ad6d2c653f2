import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent } from 'undici';
import { eventually } from '../helpers/eventually.js';
import { summarize, type LoadSummary } from './chaos-contract.js';
import { coldPath, searchJudge, type ChaosEnvironment } from './chaos-environment.js';
import { readinessSample, send, type Answer, type ReadinessSample } from './chaos-load.js';
import { startGatewayProcess } from './chaos-gateway-process.js';
import type { ExitStatus } from './chaos-processes.js';

/*
 * SIGTERM with requests in flight, against the production entry point: the exit code is the
 * operator's contract (0 clean, 1 forced). The upstream holds every search call (a delay it
 * eventually answers, or a hang it never does) so requests are surely in flight at the signal.
 */

/** What a "hard" SHUTDOWN_TIMEOUT_MS allows on top for closing pools, Redis and the process. */
export const EXIT_MARGIN_MS = 1500;

export interface StopOptions {
  inFlight: number;
  /** Upstream behaviour while the requests are in flight. */
  upstream: { kind: 'delay'; ms: number } | { kind: 'hang' };
  searchTimeoutMs: number;
  drainDelayMs: number;
  shutdownTimeoutMs: number;
  /** How long past SHUTDOWN_TIMEOUT_MS we wait for the exit before SIGKILL. */
  exitGraceMs: number;
}

export interface StopResult {
  name: string;
  options: StopOptions;
  answers: Answer[];
  summary: LoadSummary;
  /** /readyz polled on fresh connections from the signal until the listener is gone; `at` is ms after the signal. */
  readiness: ReadinessSample[];
  /** Search calls the simulator had received when the signal was sent. */
  inFlightAtSignal: number;
  /**
   * Requests whose outcome (an answer or a cut) this process had seen before it saw the
   * gateway exit: the order of the two, not the time between them.
   */
  settledBeforeExit: number;
  upstreamCalls: number;
  /** Undefined when it did not exit within SHUTDOWN_TIMEOUT_MS + exitGraceMs (then SIGKILLed). */
  exit: ExitStatus | undefined;
  /** ms from the signal to the exit (or to the SIGKILL). */
  msToExit: number;
  gatewayOutput: string;
}

export async function stopWithRequestsInFlight(
  env: ChaosEnvironment,
  name: string,
  options: StopOptions,
): Promise<StopResult> {
  env.reset();
  const gateway = await startGatewayProcess({
    upstreams: env.endpoints,
    redisUrl: env.redis.url,
    env: {
      SEARCH_TIMEOUT_MS: String(options.searchTimeoutMs),
      SHUTDOWN_DRAIN_DELAY_MS: String(options.drainDelayMs),
      SHUTDOWN_TIMEOUT_MS: String(options.shutdownTimeoutMs),
    },
  });
  const agent = new Agent({ connections: options.inFlight + 1 });
  const probes = new Agent({ connections: 4 });
  try {
    env.search.faults.add({ fault: options.upstream, pathPrefix: '/v1/search' });
    const judge = searchJudge(env, {});
    let exited = false;
    void gateway.exit.then(() => (exited = true));
    let settledBeforeExit = 0;
    const pending = Array.from({ length: options.inFlight }, (_, i) =>
      send(agent, gateway.url, coldPath(i), {
        timeoutMs: options.searchTimeoutMs + options.shutdownTimeoutMs + 5000,
        judge,
      }).then((answer) => {
        if (!exited) settledBeforeExit += 1;
        return answer;
      }),
    );
    // Every request reached the upstream (each arrival is an event); the count is reported.
    await eventually(() => env.searchCalls() >= options.inFlight, {
      what: `${options.inFlight} search calls in flight`,
      on: [[env.search.server, 'request']],
      timeoutMs: 5000,
    }).catch(() => undefined);
    const inFlightAtSignal = env.searchCalls();

    const signalledAt = performance.now();
    const signalledWall = Date.now();
    gateway.signal('SIGTERM');
    const readiness: ReadinessSample[] = [];
    // Until the listener is gone (no answer), bounded by the drain delay plus a margin.
    while (performance.now() - signalledAt < options.drainDelayMs + 2000) {
      const sample = await readinessSample(gateway.url, performance.now() - signalledAt, probes);
      readiness.push(sample);
      if (sample.status === undefined) break;
      await sleep(20);
    }
    const answers = await Promise.all(pending);
    const exit = await Promise.race([
      gateway.exit,
      sleep(options.shutdownTimeoutMs + options.exitGraceMs).then(() => undefined),
    ]);
    const msToExit = (exit?.at ?? Date.now()) - signalledWall;
    return {
      name,
      options,
      answers,
      summary: summarize(answers),
      readiness,
      inFlightAtSignal,
      settledBeforeExit,
      upstreamCalls: env.searchCalls(),
      exit,
      msToExit,
      gatewayOutput: gateway.output(),
    };
  } finally {
    env.reset();
    await gateway.dispose(0);
    await Promise.all([agent.destroy(), probes.destroy()]);
  }
}

/** In-flight requests outlast the drain delay but end well before SHUTDOWN_TIMEOUT_MS: exit 0. */
export function gracefulStop(env: ChaosEnvironment, inFlight: number) {
  return stopWithRequestsInFlight(env, 'SIGTERM, requests in flight drain', {
    inFlight,
    upstream: { kind: 'delay', ms: 1000 },
    searchTimeoutMs: 4000,
    drainDelayMs: 300,
    shutdownTimeoutMs: 3000,
    exitGraceMs: 3000,
  });
}

/**
 * Requests hang past SHUTDOWN_TIMEOUT_MS: connections are cut at the deadline and the exit code
 * is 1. The upstream deadline is a minute, far past the point where we stop waiting for the
 * exit (and SIGKILL): a process that exits by itself cannot have waited for its upstream calls.
 */
export function forcedStop(env: ChaosEnvironment, inFlight: number) {
  return stopWithRequestsInFlight(env, 'SIGTERM, requests hang past the deadline', {
    inFlight,
    upstream: { kind: 'hang' },
    searchTimeoutMs: 60_000,
    drainDelayMs: 200,
    shutdownTimeoutMs: 1000,
    exitGraceMs: 5000,
  });
}

import { Agent } from 'undici';
import { summarize, type AllowedErrors, type LoadSummary } from './chaos-contract.js';
import {
  HOT_PATHS,
  coldPath,
  pathFor,
  recover,
  searchJudge,
  warmUp,
  type ChaosEnvironment,
  type WarmUp,
} from './chaos-environment.js';
import { startGatewayProcess, type GatewayProcess } from './chaos-gateway-process.js';
import {
  readinessSample,
  runLoad,
  send,
  type Answer,
  type Judge,
  type ReadinessSample,
  type TimelineStep,
} from './chaos-load.js';

/*
 * How a load scenario runs, at a given scale: its own gateway process (fresh breakers, its own
 * key prefix), a warm-up of the hot keys, the load with a fault switched on and off on a
 * timeline given as shares of the run, then fresh requests until the gateway answers 200 again
 * without a restart. The result holds what the tests assert and the chaos table prints.
 */

export interface Scale {
  workers: number;
  durationMs: number;
  maxRequests: number;
  /** Per client request: comfortably above the gateway's search deadline (3 s). */
  timeoutMs: number;
  /** Concurrent copies of each hot request in the warm-up. */
  warmCopies: number;
}

export const TEST_SCALE: Scale = {
  workers: 12,
  durationMs: 3000,
  maxRequests: 6000,
  timeoutMs: 5000,
  warmCopies: 8,
};

export const CHAOS_SCALE: Scale = {
  workers: 32,
  durationMs: 10_000,
  maxRequests: 100_000,
  timeoutMs: 5000,
  warmCopies: 16,
};

export interface LoadScenarioResult {
  name: string;
  warm: WarmUp;
  answers: Answer[];
  summary: LoadSummary;
  readiness: ReadinessSample[];
  marks: Record<string, number>;
  /** Search calls the simulator received from the end of the warm-up to the end of recovery. */
  upstreamCalls: number;
  /** Two per request that was not a HIT: every read is retried at most once. */
  callBudget: number;
  /** Fresh requests after the load until the first 200; the last one is the verdict. */
  recovery: Answer[];
  /** After that 200: every hot key and a few fresh queries, one by one. */
  confirmation: Answer[];
  finalReadiness: ReadinessSample;
  gatewayOutput: string;
  /** Scenario-specific facts (Redis keys, calls while Redis was away). */
  facts: Record<string, number>;
}

export interface LoadScenarioSpec {
  name: string;
  allowedErrors: AllowedErrors;
  /** The gateway's environment beyond chaos-gateway-process.ts's defaults. */
  env?: Record<string, string>;
  /** Steps at shares of the run (0..1); `facts` collects what a step wants to report. */
  steps(gateway: GatewayProcess, facts: Record<string, number>): Step[];
  /** After the load and recovery, before the gateway stops. */
  after?(gateway: GatewayProcess, facts: Record<string, number>): Promise<void>;
}

export interface Step {
  at: number;
  name: string;
  action: () => void | Promise<void>;
}

export async function runLoadScenario(
  env: ChaosEnvironment,
  scale: Scale,
  spec: LoadScenarioSpec,
): Promise<LoadScenarioResult> {
  env.reset();
  const gateway = await startGatewayProcess({
    upstreams: env.endpoints,
    redisUrl: env.redis.url,
    ...(spec.env ? { env: spec.env } : {}),
  });
  try {
    const warm = await warmUp(env, gateway.url, scale.warmCopies);
    const judge = searchJudge(env, spec.allowedErrors, warm.references);
    const facts: Record<string, number> = {};
    const callsBefore = env.searchCalls();
    const timeline: TimelineStep[] = spec.steps(gateway, facts).map((step) => ({
      atMs: step.at * scale.durationMs,
      name: step.name,
      action: step.action,
    }));
    const run = await runLoad({
      baseUrl: gateway.url,
      workers: scale.workers,
      durationMs: scale.durationMs,
      maxRequests: scale.maxRequests,
      pathFor,
      judge,
      timeoutMs: scale.timeoutMs,
      timeline,
    });
    env.search.faults.clear();
    const recovery = await recover(gateway.url, judge, { firstN: scale.maxRequests });
    const confirmation = await confirm(gateway.url, recovery, scale, judge);
    const upstreamCalls = env.searchCalls() - callsBefore;
    await spec.after?.(gateway, facts);
    const finalReadiness = await readinessSample(gateway.url, 0);
    const counted = [...run.answers, ...recovery, ...confirmation];
    return {
      name: spec.name,
      warm,
      answers: run.answers,
      summary: summarize(run.answers),
      readiness: run.readiness,
      marks: run.marks,
      upstreamCalls,
      callBudget: 2 * counted.filter((a) => a.cache !== 'HIT').length,
      recovery,
      confirmation,
      finalReadiness,
      gatewayOutput: gateway.output(),
      facts,
    };
  } finally {
    env.reset();
    await gateway.dispose();
  }
}

/** Once a fresh request got its 200: every hot key and a few fresh queries, one by one. */
async function confirm(baseUrl: string, recovery: Answer[], scale: Scale, judge: Judge) {
  if (recovery.at(-1)?.status !== 200) return [];
  const agent = new Agent({ connections: 1 });
  try {
    const paths = [...HOT_PATHS, ...[1, 2, 3].map((i) => coldPath(scale.maxRequests + 50 + i))];
    const answers: Answer[] = [];
    for (const path of paths)
      answers.push(await send(agent, baseUrl, path, { timeoutMs: scale.timeoutMs, judge }));
    return answers;
  } finally {
    await agent.close();
  }
}

import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, getGlobalDispatcher, request, type Dispatcher } from 'undici';

/*
 * Load from inside the test process: a fixed number of workers, each sending one request at a
 * time until the time or the request budget runs out, every request with its own timeout. Each
 * response is judged the moment it arrives and only the verdict is kept, so a long run does not
 * hold every body in memory.
 */

/** One response as it came back, before judging. */
export interface Received {
  status: number;
  headers: Record<string, string | undefined>;
  body: string;
}

/** One request's outcome, body dropped. */
export interface Answer {
  path: string;
  /** When it was sent, in ms since the run started. */
  at: number;
  ms: number;
  /** Undefined when no response came (socket error, client timeout). */
  status: number | undefined;
  cache: string | undefined;
  retryAfter: string | undefined;
  /** The Connection header: whether the server meant to keep the socket. */
  connection: string | undefined;
  /** The client-side failure, when there was no response. */
  error: string | undefined;
  /** Why the answer breaks the contract, if it does. */
  violation: string | undefined;
}

export type Judge = (path: string, received: Received) => string | undefined;

const HEADERS = ['content-type', 'x-cache', 'retry-after', 'x-request-id', 'connection'];

/** Sends one GET and reads the whole body within `timeoutMs`; never throws. */
export async function send(
  dispatcher: Dispatcher,
  baseUrl: string,
  path: string,
  options: {
    timeoutMs: number;
    judge: Judge;
    startedAt?: number;
    fresh?: boolean;
    headers?: Record<string, string>;
  },
): Promise<Answer> {
  const t0 = performance.now();
  const at = t0 - (options.startedAt ?? t0);
  try {
    const res = await request(`${baseUrl}${path}`, {
      dispatcher,
      signal: AbortSignal.timeout(options.timeoutMs),
      ...(options.headers ? { headers: options.headers } : {}),
      // A fresh connection that closes after the answer (health probes during a stop).
      ...(options.fresh === true ? { reset: true } : {}),
    });
    const body = await res.body.text();
    const headers: Record<string, string | undefined> = {};
    for (const name of HEADERS) {
      const value = res.headers[name];
      headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    const received = { status: res.statusCode, headers, body };
    return {
      path,
      at,
      ms: performance.now() - t0,
      status: res.statusCode,
      cache: headers['x-cache'],
      retryAfter: headers['retry-after'],
      connection: headers['connection'],
      error: undefined,
      violation: options.judge(path, received),
    };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const name = typeof code === 'string' ? code : (error as Error).name;
    return {
      path,
      at,
      ms: performance.now() - t0,
      status: undefined,
      cache: undefined,
      retryAfter: undefined,
      connection: undefined,
      error: name,
      violation: `no answer (${name})`,
    };
  }
}

export interface TimelineStep {
  /** Offset from the start of the run. */
  atMs: number;
  name: string;
  action: () => void | Promise<void>;
}

export interface ReadinessSample {
  at: number;
  status: number | undefined;
  /** The report's `status`: ok, degraded or draining. */
  state: string | undefined;
  /** `checks.search.circuit` */
  searchCircuit: string | undefined;
  /** `checks.cache.status` */
  cache: string | undefined;
}

export interface LoadOptions {
  baseUrl: string;
  workers: number;
  durationMs: number;
  /** Hard cap on the number of requests, whatever the time. */
  maxRequests: number;
  /** Path of the n-th request of the run. */
  pathFor(n: number): string;
  judge: Judge;
  /** Per request; comfortably above the gateway's own deadline. */
  timeoutMs: number;
  timeline?: readonly TimelineStep[];
  /** Polls `/readyz` this often; 0 disables. */
  readinessEveryMs?: number;
}

export interface LoadRun {
  answers: Answer[];
  readiness: ReadinessSample[];
  /** When each timeline step actually ran, in ms since the start. */
  marks: Record<string, number>;
}

export async function runLoad(options: LoadOptions): Promise<LoadRun> {
  const agent = new Agent({ connections: options.workers + 2, keepAliveTimeout: 10_000 });
  const startedAt = performance.now();
  const elapsed = () => performance.now() - startedAt;
  const answers: Answer[] = [];
  const readiness: ReadinessSample[] = [];
  const marks: Record<string, number> = {};
  let next = 0;
  let done = false;

  const worker = async () => {
    while (elapsed() < options.durationMs && next < options.maxRequests) {
      const path = options.pathFor(next);
      next += 1;
      answers.push(
        await send(agent, options.baseUrl, path, {
          timeoutMs: options.timeoutMs,
          judge: options.judge,
          startedAt,
        }),
      );
    }
  };
  const timeline = async () => {
    for (const step of [...(options.timeline ?? [])].sort((a, b) => a.atMs - b.atMs)) {
      const wait = step.atMs - elapsed();
      if (wait > 0) await sleep(wait);
      marks[step.name] = elapsed();
      await step.action();
    }
  };
  const probe = async () => {
    const every = options.readinessEveryMs ?? 100;
    if (every <= 0) return;
    while (!done) {
      readiness.push(await readinessSample(options.baseUrl, elapsed(), agent));
      await sleep(every);
    }
  };

  const probing = probe();
  try {
    await Promise.all([timeline(), ...Array.from({ length: options.workers }, worker)]);
  } finally {
    done = true;
    await probing;
    await agent.close();
  }
  return { answers, readiness, marks };
}

/** One `/readyz` on a connection that closes after it; `at` is stored as given. */
export async function readinessSample(
  baseUrl: string,
  at: number,
  dispatcher: Dispatcher = getGlobalDispatcher(),
): Promise<ReadinessSample> {
  try {
    const res = await request(`${baseUrl}/readyz`, {
      dispatcher,
      signal: AbortSignal.timeout(2000),
      reset: true,
    });
    const body = (await res.body.json()) as {
      status?: string;
      checks?: { search?: { circuit?: string }; cache?: { status?: string } };
    };
    return {
      at,
      status: res.statusCode,
      state: body.status,
      searchCircuit: body.checks?.search?.circuit,
      cache: body.checks?.cache?.status,
    };
  } catch {
    return { at, status: undefined, state: undefined, searchCircuit: undefined, cache: undefined };
  }
}

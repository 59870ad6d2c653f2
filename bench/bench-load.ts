import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import { hasTaskset } from './bench-process.js';
import { mixPath, type QueryMix } from './query-mix.js';
import { MIX_LUA, UNIQUE_LUA } from './wrk-scripts.js';

/** One measured run of load against a URL. */
export interface LoadResult {
  requests: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** Non-2xx/3xx answers and socket errors. */
  errors: number;
}

/** Which path each request asks for. */
export type PathPlan =
  /** The URL's own, every time. */
  | { kind: 'same' }
  /** The URL's with a counter on its query, so that every request is a new key (a miss). */
  | { kind: 'unique' }
  /** The URL's with the query mix's suffix of request i (query-mix.ts), for a window `salt`. */
  | { kind: 'mix'; mix: QueryMix; salt: string };

export interface LoadOptions {
  url: string;
  seconds: number;
  connections: number;
  paths: PathPlan;
  /** Request headers every request carries (G1z: a browser's Accept-Encoding). */
  headers?: Readonly<Record<string, string>>;
  /** The load generator's core (the server has the other one). */
  core: number;
}

const run = promisify(execFile);

export const hasWrk = (() => {
  try {
    execFileSync('sh', ['-c', 'command -v wrk'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

function millis(text: string): number {
  const match = /([\d.]+)(us|ms|s)/.exec(text);
  if (!match) return Number.NaN;
  const value = Number(match[1]);
  return match[2] === 'us' ? value / 1000 : match[2] === 's' ? value * 1000 : value;
}

async function withWrk(options: LoadOptions): Promise<LoadResult> {
  const args = ['-t1', `-c${options.connections}`, `-d${options.seconds}s`, '--latency'];
  for (const [name, value] of Object.entries(options.headers ?? {}))
    args.push('-H', `${name}: ${value}`);
  const plan = options.paths;
  const script =
    plan.kind === 'same' ? undefined : wrkScript(plan.kind === 'mix' ? MIX_LUA : UNIQUE_LUA);
  if (script !== undefined) args.push('-s', script);
  args.push(options.url);
  if (plan.kind === 'mix')
    args.push('--', plan.mix.ranksFile, plan.salt, String(plan.mix.epochLength));
  const [command, ...rest] = hasTaskset
    ? ['taskset', '-c', String(options.core), 'wrk', ...args]
    : ['wrk', ...args];
  const { stdout } = await run(command, rest, { maxBuffer: 1 << 20 }).finally(() => {
    if (script !== undefined) rmSync(dirname(script), { recursive: true, force: true });
  });
  const requests = Number(/(\d+) requests in/.exec(stdout)?.[1] ?? 0);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(stdout)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(
    stdout,
  );
  const socketErrors = socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0;
  return {
    requests,
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1] ?? 0),
    p50Ms: millis(/ 50%\s+(\S+)/.exec(stdout)?.[1] ?? ''),
    p99Ms: millis(/ 99%\s+(\S+)/.exec(stdout)?.[1] ?? ''),
    errors: non2xx + socketErrors,
  };
}

function wrkScript(lua: string): string {
  const script = join(mkdtempSync(join(tmpdir(), 'bench-wrk-')), 'paths.lua');
  writeFileSync(script, lua);
  return script;
}

/** The path of request `i` (from 0) under `plan`, as the wrk scripts build it. */
function pathOf(plan: PathPlan, path: string, i: number): string {
  switch (plan.kind) {
    case 'same':
      return path;
    case 'unique':
      return path.replace(/q=([^&]*)/, `q=$1+${i + 1}x${Math.random()}`);
    case 'mix':
      return mixPath(path, plan.mix, plan.salt, i);
  }
}

async function withAutocannon(options: LoadOptions, overallRate?: number): Promise<LoadResult> {
  const plan = options.paths;
  let sent = 0;
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.seconds,
    ...(options.headers ? { headers: { ...options.headers } } : {}),
    ...(overallRate ? { overallRate } : {}),
    ...(plan.kind === 'same'
      ? {}
      : {
          requests: [
            {
              setupRequest: (request: autocannon.Request) => ({
                ...request,
                path: pathOf(plan, request.path ?? '/', sent++),
              }),
            },
          ],
        }),
  });
  return {
    requests: result.requests.total,
    rps: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.non2xx + result.errors,
  };
}

/** Load as fast as the server answers: wrk when installed (Debian's), else autocannon. */
export function load(options: LoadOptions): Promise<LoadResult> {
  return hasWrk ? withWrk(options) : withAutocannon(options);
}

/** Load at a fixed rate (autocannon's overallRate; Debian ships no wrk2): the latency there. */
export function loadAtRate(options: LoadOptions, rate: number): Promise<LoadResult> {
  return withAutocannon(options, rate);
}

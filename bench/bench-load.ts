import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import { hasTaskset } from './bench-process.js';

/** One measured run of load against a URL. */
export interface LoadResult {
  requests: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** Non-2xx/3xx answers and socket errors. */
  errors: number;
}

export interface LoadOptions {
  url: string;
  seconds: number;
  connections: number;
  /** Appended to the path with a counter, so that every request is a new key (a miss). */
  uniqueSuffix?: boolean;
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

/** wrk's Lua hook: every request gets `+<n>` on its query's first value (a new key). */
const UNIQUE_LUA = `
math.randomseed(os.time() + math.floor(os.clock() * 1000000))
counter = 0
request = function()
  counter = counter + 1
  local path = string.gsub(wrk.path, "q=([^&]*)", "q=%1+" .. counter .. "x" .. math.random(1, 1000000000))
  return wrk.format(nil, path)
end
`;

function millis(text: string): number {
  const match = /([\d.]+)(us|ms|s)/.exec(text);
  if (!match) return Number.NaN;
  const value = Number(match[1]);
  return match[2] === 'us' ? value / 1000 : match[2] === 's' ? value * 1000 : value;
}

async function withWrk(options: LoadOptions): Promise<LoadResult> {
  const args = ['-t1', `-c${options.connections}`, `-d${options.seconds}s`, '--latency'];
  if (options.uniqueSuffix) {
    const script = join(mkdtempSync(join(tmpdir(), 'bench-wrk-')), 'unique.lua');
    writeFileSync(script, UNIQUE_LUA);
    args.push('-s', script);
  }
  const [command, ...rest] = hasTaskset
    ? ['taskset', '-c', String(options.core), 'wrk', ...args, options.url]
    : ['wrk', ...args, options.url];
  const { stdout } = await run(command, rest, { maxBuffer: 1 << 20 });
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

async function withAutocannon(options: LoadOptions, overallRate?: number): Promise<LoadResult> {
  let counter = 0;
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.seconds,
    ...(overallRate ? { overallRate } : {}),
    ...(options.uniqueSuffix
      ? {
          requests: [
            {
              setupRequest: (request: autocannon.Request) => {
                counter += 1;
                const path = (request.path ?? '/').replace(
                  /q=([^&]*)/,
                  `q=$1+${counter}x${Math.random()}`,
                );
                return { ...request, path };
              },
            },
          ],
        }
      : {}),
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

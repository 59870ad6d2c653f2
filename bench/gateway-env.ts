import { join } from 'node:path';
import {
  GATEWAY_ENVIRONMENT,
  GATEWAY_NODE_OPTIONS as PRODUCTION_NODE_OPTIONS,
} from '../config/runtime.js';
import { freePort, repoRoot } from '../test/harness/chaos-processes.js';
import { startProcess, type BenchProcess } from './bench-process.js';

/*
 * What every benchmark's gateway shares (`npm run bench`, `npm run bench:events`): the simulated
 * upstreams in a process of their own, the production node options and the environment that
 * points the gateway at them, with limits high enough that only the measured work counts.
 */

/** The search service's client token the simulators expect. */
export const SEARCH_TOKEN = 'bench-search-token';

/** The gateway runs as the container runs it; BENCH_GATEWAY_NODE_OPTIONS varies it. */
export const GATEWAY_NODE_OPTIONS = (
  process.env['BENCH_GATEWAY_NODE_OPTIONS'] ?? PRODUCTION_NODE_OPTIONS
)
  .split(' ')
  .filter(Boolean);

/** This build's entry; another build's (e.g. a checkout of an older commit) may stand in. */
export const GATEWAY_ENTRY =
  process.env['BENCH_GATEWAY_ENTRY'] ?? join(repoRoot(), 'dist/src/main.js');

/** Where the simulators listen, and the chat service account (an administrator). */
export interface Upstreams {
  searchOrigin: string;
  chatOrigin: string;
  chatEmail: string;
  chatApiKey: string;
  /** The simulators target's own port: `/reset` and the search call count (bench.ts). */
  controlPort: number;
}

/** Starts bench/targets/simulators-target.ts on `core`. */
export async function startSimulators(
  core: number,
): Promise<{ process: BenchProcess; upstreams: Upstreams }> {
  const target = join(repoRoot(), 'bench/targets/simulators-target.ts');
  const sims = await startProcess(
    ['--import', 'tsx', target, SEARCH_TOKEN, String(await freePort())],
    { core, label: 'simulators' },
  );
  const ready = sims.ready as Record<string, string | number>;
  return {
    process: sims,
    upstreams: {
      searchOrigin: String(ready['searchOrigin']),
      chatOrigin: String(ready['chatOrigin']),
      chatEmail: String(ready['chatEmail']),
      chatApiKey: String(ready['chatApiKey']),
      controlPort: Number(ready['controlPort']),
    },
  };
}

/**
 * The gateway's environment on `port` in front of the simulators: service mode with the chat
 * service account (so CHAT_EVENTS is on by default), caches that stay fresh through a run, and a
 * rate limit no benchmark reaches. `extra` adds to it or overrides it (Redis, limits). `runtime`
 * is the process environment the container starts it with (config/runtime.ts); a baseline
 * build may run with another (BENCH_BASELINE_ENVIRONMENT).
 */
export function gatewayEnv(
  port: number,
  upstreams: Upstreams,
  extra: Record<string, string> = {},
  runtime: Readonly<Record<string, string>> = GATEWAY_ENVIRONMENT,
): Record<string, string> {
  return {
    ...runtime,
    HOST: '127.0.0.1',
    PORT: String(port),
    LOG_LEVEL: 'info',
    SEARCH_BASE_URL: upstreams.searchOrigin,
    SEARCH_CLIENT_TOKEN: SEARCH_TOKEN,
    CHAT_BASE_URL: upstreams.chatOrigin,
    CHAT_AUTH_MODE: 'service',
    CHAT_EMAIL: upstreams.chatEmail,
    CHAT_API_KEY: upstreams.chatApiKey,
    CURSOR_SECRET: 'bench-cursor-secret-0123456789abcdef',
    // The schema's most per window, over a minute: 16,000 req/s from one client. Over an hour it
    // was a million requests in all, fewer than bench:events sends at 12,000 req/s (its E3
    // windows then measured 429s).
    RATE_LIMIT_PER_CLIENT: '1000000',
    RATE_LIMIT_WINDOW_SECONDS: '60',
    SEARCH_CACHE_TTL_SECONDS: '3600',
    CHANNEL_FOLDERS_CACHE_TTL_SECONDS: '3600',
    SHUTDOWN_DRAIN_DELAY_MS: '0',
    // A run's misses leave ~200 MB of entries (each kept an hour for stale-if-error) in the
    // machine's Redis, which has no maxmemory: past the default 256 MiB budget the cache stops
    // storing, and later rows (G5's stampede: each request after the first load a miss) would
    // measure that instead of what they are for. The budget has tests of its own.
    CACHE_REDIS_MAX_BYTES: String(64 * 1024 * 1024 * 1024),
    ...extra,
  };
}

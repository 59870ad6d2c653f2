import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { GATEWAY_ENVIRONMENT, GATEWAY_NODE_OPTIONS } from '../../config/runtime.js';
import { exitOf, repoRoot, tail, waitForChild, type ExitStatus } from './chaos-processes.js';

/*
 * The production build of the gateway (`node dist/src/main.js`), started with an environment as
 * an operator would, against the simulators and the private Redis.
 */

/** What the gateway needs to reach the simulated upstreams. */
export interface UpstreamEndpoints {
  searchOrigin: string;
  searchToken: string;
  chatOrigin: string;
  chatEmail: string;
  chatApiKey: string;
}

export interface GatewayProcessOptions {
  upstreams: UpstreamEndpoints;
  redisUrl: string;
  /** Overrides of the defaults below. */
  env?: Record<string, string>;
  /** Starts it under `prlimit --nofile=N:N`: a process that may open at most N descriptors. */
  openFilesLimit?: number;
}

export interface GatewayProcess {
  readonly url: string;
  readonly pid: number;
  /** Its REDIS_KEY_PREFIX, unique per process. */
  readonly prefix: string;
  readonly exit: Promise<ExitStatus>;
  readonly running: boolean;
  signal(signal: NodeJS.Signals): void;
  /** The tail of what it logged (LOG_LEVEL=warn by default). */
  output(): string;
  /** Resolves when it logs a line `line` matches (now or within `ms`). */
  waitForLog(line: RegExp, ms: number): Promise<void>;
  /** Stops it if it still runs: SIGTERM, then SIGKILL after `graceMs`. */
  dispose(graceMs?: number): Promise<void>;
}

/**
 * Starts `node dist/src/main.js` (run `npm run build` first) on port 0 and waits for the
 * 'listening' notice it sends over IPC, which carries the URL it really listens on. Short
 * deadlines and small breakers so faults act within seconds; the client limit is out of the way.
 */
export async function startGatewayProcess(options: GatewayProcessOptions): Promise<GatewayProcess> {
  const entry = join(repoRoot(), 'dist', 'src', 'main.js');
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run \`npm run build\` first`);
  const prefix = `chaos:${randomUUID()}:`;
  const { upstreams } = options;
  const env: Record<string, string> = {
    PATH: process.env['PATH'] ?? '',
    // As the container starts it (config/runtime.ts), so memory figures are production's.
    ...GATEWAY_ENVIRONMENT,
    // The OS picks the port; main reports the URL (no probe-then-listen race for it).
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    SEARCH_BASE_URL: upstreams.searchOrigin,
    SEARCH_CLIENT_TOKEN: upstreams.searchToken,
    CHAT_BASE_URL: upstreams.chatOrigin,
    CHAT_AUTH_MODE: 'service',
    CHAT_EMAIL: upstreams.chatEmail,
    CHAT_API_KEY: upstreams.chatApiKey,
    CURSOR_SECRET: 'chaos-cursor-secret-0123456789abcdef',
    SESSION_SECRET: 'chaos-session-secret-0123456789abcdef',
    REDIS_URL: options.redisUrl,
    REDIS_KEY_PREFIX: prefix,
    // Three processes share two cores here; 100 ms would turn scheduler noise into misses.
    REDIS_COMMAND_TIMEOUT_MS: '500',
    // A starved process's fresh start (cold code, first connections) must not turn into 504s:
    // the suite runs beside a CPU hog too. The slow-upstream scenario delays the search
    // service past this deadline (4 s).
    SEARCH_TIMEOUT_MS: '3000',
    SEARCH_CACHE_TTL_SECONDS: '1',
    SEARCH_CACHE_STALE_SECONDS: '1',
    SEARCH_CACHE_STALE_IF_ERROR_SECONDS: '60',
    BREAKER_FAILURE_PERCENT: '50',
    BREAKER_MIN_REQUESTS: '5',
    BREAKER_WINDOW_SECONDS: '1',
    BREAKER_OPEN_SECONDS: '1',
    RATE_LIMIT_PER_CLIENT: '1000000',
    SHUTDOWN_DRAIN_DELAY_MS: '200',
    SHUTDOWN_TIMEOUT_MS: '5000',
    ...options.env,
  };
  // The IPC channel carries the gateway's 'listening' notice (main.ts): start-up is an event.
  const limit = options.openFilesLimit;
  // As the container starts it (config/runtime.ts), so memory figures are production's.
  const node = [process.execPath, ...GATEWAY_NODE_OPTIONS.split(' '), entry];
  const [command, args] =
    limit === undefined
      ? [node[0]!, node.slice(1)]
      : ['prlimit', [`--nofile=${limit}:${limit}`, '--', ...node]];
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  const output = tail(child);
  let exitStatus: ExitStatus | undefined;
  const exit = exitOf(child).then((status) => (exitStatus = status));
  let url: string | undefined;

  try {
    await waitForChild(
      child,
      'the gateway',
      {
        message: (m) => {
          const notice = m as { event?: unknown; url?: unknown } | null;
          if (notice?.event !== 'listening' || typeof notice.url !== 'string') return false;
          url = notice.url;
          return true;
        },
      },
      15_000,
      output,
    );
  } catch (error) {
    if (!exitStatus) child.kill('SIGKILL');
    throw error;
  }
  if (url === undefined) throw new Error('the gateway reported no URL');

  return {
    url,
    pid: child.pid!,
    prefix,
    exit,
    get running() {
      return exitStatus === undefined;
    },
    signal: (signal) => child.kill(signal),
    output,
    waitForLog: (line, ms) =>
      line.test(output())
        ? Promise.resolve()
        : waitForChild(child, 'the gateway', { line }, ms, output),
    async dispose(graceMs = 3000) {
      if (exitStatus) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exit;
      clearTimeout(timer);
    },
  };
}

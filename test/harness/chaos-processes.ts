import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/*
 * Real processes for the fault-injection tests and `npm run chaos`: a private redis-server that
 * can be SIGKILLed and restarted (here), and the production build of the gateway
 * (chaos-gateway-process.ts). Loopback only; every wait is bounded.
 */

/**
 * A port nobody listens on right now (the OS picks it; it is closed again at once), for what
 * cannot listen on port 0 and say where it went: redis-server (port 0 means no TCP at all) and
 * the gateway's OPS_PORT, which main does not report. The gateway itself starts on port 0.
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The repository root, from bench/ (vitest runs the source) or dist/bench/ (the build). */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('no package.json above the chaos harness');
    dir = parent;
  }
  return dir;
}

/** Keeps the last `limit` characters a child wrote, for failure messages. */
export function tail(child: ChildProcess, limit = 16_384): () => string {
  let text = '';
  const keep = (chunk: Buffer) => {
    text = (text + chunk.toString('utf8')).slice(-limit);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return () => text;
}

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Date.now() when it exited. */
  at: number;
}

/** Resolves when the child exits; if this process exits first, the child goes with it. */
export function exitOf(child: ChildProcess): Promise<ExitStatus> {
  const reap = () => child.kill('SIGKILL');
  process.once('exit', reap);
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      process.off('exit', reap);
      resolve({ code, signal, at: Date.now() });
    });
  });
}

/**
 * Resolves when the child says something `match` accepts (a line on stdout or stderr, or an
 * IPC message); rejects when it exits first or `ms` pass. Waiting on what a process says,
 * never on a guess of how long it takes.
 */
export function waitForChild(
  child: ChildProcess,
  what: string,
  match: { line?: RegExp; message?: (message: unknown) => boolean },
  ms: number,
  output: () => string,
): Promise<void> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    const onData = (chunk: Buffer) => {
      buffered = (buffered + chunk.toString('utf8')).slice(-4096);
      if (match.line?.test(buffered)) done();
    };
    const onMessage = (message: unknown) => {
      if (match.message?.(message)) done();
    };
    const onExit = (code: number | null, signal: string | null) =>
      done(new Error(`${what} exited (${code ?? signal}) before it was ready: ${output()}`));
    const timer = setTimeout(
      () => done(new Error(`${what} was not ready within ${ms} ms: ${output()}`)),
      ms,
    );
    function done(error?: Error) {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.stderr?.off('data', onData);
      child.off('message', onMessage);
      child.off('exit', onExit);
      if (error) reject(error);
      else resolve();
    }
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/** Ports a redis-server start tries before its error is the test's. */
const PORT_ATTEMPTS = 5;

/** A start that failed because a port probed free was bound by another process meanwhile. */
const portTaken = (error: unknown) => /Address already in use/.test(String(error));

/**
 * Runs `start` (which picks free ports itself) again while it fails only because one of them
 * was taken between the probe and the bind: under load another test file's process may bind
 * it first. Any other failure is the test's at once.
 */
export async function onFreshPorts<T>(start: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await start();
    } catch (error) {
      if (attempt >= PORT_ATTEMPTS || !portTaken(error)) throw error;
    }
  }
}

export interface RedisServer {
  readonly port: number;
  readonly url: string;
  readonly running: boolean;
  /** SIGKILL: no shutdown, no goodbye to its clients; resolves once the process is gone. */
  kill(): Promise<void>;
  /** Starts it again on the same port, empty (no persistence). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A private redis-server on a free loopback port: never the shared one on 6379. `args` adds
 * server options (e.g. a tiny `--maxmemory` with `--maxmemory-policy noeviction`).
 */
export async function startRedisServer(args: readonly string[] = []): Promise<RedisServer> {
  let port = await freePort();
  let child: ChildProcess | undefined;
  let exit: Promise<ExitStatus> | undefined;
  let exited = false;

  async function start(): Promise<void> {
    const proc = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...args],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child = proc;
    exited = false;
    const output = tail(proc);
    exit = exitOf(proc);
    void exit.then(() => {
      if (child === proc) exited = true;
    });
    await waitForChild(proc, 'redis-server', { line: /Ready to accept connections/ }, 5000, output);
  }

  async function kill(): Promise<void> {
    if (child === undefined || exited) return;
    child.kill('SIGKILL');
    await exit;
  }

  // A free port is only free when it was probed: another process (a parallel test file's
  // redis-server or gateway) may bind it before this one does. Such a start fails at once with
  // "Address already in use"; it is tried again on another port, never waited for.
  for (let attempt = 1; ; attempt += 1) {
    try {
      await start();
      break;
    } catch (error) {
      if (attempt >= PORT_ATTEMPTS || !portTaken(error)) throw error;
      port = await freePort();
    }
  }
  return {
    port,
    url: `redis://127.0.0.1:${port}/0`,
    get running() {
      return !exited;
    },
    kill,
    async restart() {
      await kill();
      await start();
    },
    stop: kill,
  };
}

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

/*
 * Real processes for the fault-injection tests and `npm run chaos`: a private redis-server that
 * can be SIGKILLed and restarted (here), and the production build of the gateway
 * (chaos-gateway-process.ts). Loopback only; every wait is bounded.
 */

/** A port nobody listens on right now (the OS picks it; it is closed again at once). */
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

export async function waitUntil(
  what: string,
  ready: () => Promise<boolean>,
  ms: number,
  died: () => string | undefined,
) {
  const giveUp = Date.now() + ms;
  for (;;) {
    const reason = died();
    if (reason !== undefined) throw new Error(`${what} exited before it was ready: ${reason}`);
    if (await ready()) return;
    if (Date.now() > giveUp) throw new Error(`${what} was not ready within ${ms} ms`);
    await sleep(50);
  }
}

/** PING over a plain socket: no client library, no reconnect logic to hide a dead server. */
function redisAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write('PING\r\n'));
    socket.setTimeout(500, () => socket.destroy());
    socket.once('data', (chunk: Buffer) => {
      socket.destroy();
      resolve(chunk.toString('utf8').startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
    socket.once('close', () => resolve(false));
  });
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

/** A private redis-server on a free loopback port: never the shared one on 6379. */
export async function startRedisServer(): Promise<RedisServer> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  let exit: Promise<ExitStatus> | undefined;
  let exited = false;

  async function start(): Promise<void> {
    const proc = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child = proc;
    exited = false;
    const output = tail(proc);
    exit = exitOf(proc);
    void exit.then(() => {
      if (child === proc) exited = true;
    });
    await waitUntil(
      'redis-server',
      () => redisAnswers(port),
      5000,
      () => (exited ? output() : undefined),
    );
  }

  async function kill(): Promise<void> {
    if (child === undefined || exited) return;
    child.kill('SIGKILL');
    await exit;
  }

  await start();
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

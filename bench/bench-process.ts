import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mainThreadCpuMicros, processTreeCpuMicros } from './process-tree-cpu.js';

/** A server (or helper) under the benchmark, in its own process, maybe pinned to a core. */
export interface BenchProcess {
  readonly pid: number;
  /** What it announced over IPC when it was ready. */
  readonly ready: Record<string, unknown>;
  /** utime + stime so far of the process and its descendants (its tree), in microseconds. */
  cpuMicros(): number;
  /** utime + stime so far of its main thread alone, in microseconds. */
  mainThreadCpuMicros(): number;
  /** Peak resident set size so far (VmHWM), in MB. */
  peakRssMb(): number;
  /** Resident set size now (VmRSS), in MB. */
  rssMb(): number;
  /**
   * Sends `message` over IPC with a fresh `id` and resolves with the process's message that
   * carries the same `id` back (a helper that takes commands, e.g. targets/stream-client.ts).
   */
  request(message: Record<string, unknown>, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Once it has exited: its exit code or signal and the tail of its stderr; else undefined. */
  exited(): string | undefined;
  stop(): Promise<void>;
}

export const hasTaskset = (() => {
  try {
    execFileSync('sh', ['-c', 'command -v taskset'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/**
 * Shell that raises the descriptor limit to `n`, or to the hard limit where `n` is refused (a
 * sandbox without CAP_SYS_RESOURCE, where even root cannot go past it).
 */
const raiseOpenFiles = (n: number) =>
  `ulimit -n ${n} 2>/dev/null || ulimit -n "$(ulimit -Hn)" || exit 1`;

/** The descriptor limit a child started with `openFiles: n` gets on this machine. */
export function openFilesFor(n: number): number {
  const out = execFileSync('sh', ['-c', `${raiseOpenFiles(n)}; ulimit -n`])
    .toString()
    .trim();
  return out === 'unlimited' ? Number.POSITIVE_INFINITY : Number(out);
}

/** A figure of /proc/<pid>/status in MB (NaN once the process has exited). */
const readStatus = (pid: number, field: string): number => {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return Number.NaN;
  }
  // A process that has exited but not yet been reaped (a zombie) has no memory figures.
  const kb = new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1];
  return kb === undefined ? Number.NaN : Number(kb) / 1024;
};

/** Children still running: if the benchmark itself dies, they die with it. */
const running = new Set<() => void>();
process.once('exit', () => {
  for (const reap of running) reap();
});

/** Starts `node <args>` (pinned to `core` when taskset exists) and waits for its ready notice. */
export async function startProcess(
  args: readonly string[],
  options: {
    env?: Record<string, string>;
    core?: number;
    label: string;
    /** Raise its descriptor limit to this first (`sh -c 'ulimit -n …; exec …'`). */
    openFiles?: number;
    /** A command that runs node, e.g. valgrind and its options (bench/instructions.ts). */
    wrapper?: readonly string[];
    /** How long it may take to say it listens (default 20 s). */
    startTimeoutMs?: number;
  },
): Promise<BenchProcess> {
  const node = [...(options.wrapper ?? []), process.execPath, ...args];
  const pinned =
    options.core !== undefined && hasTaskset
      ? ['taskset', '-c', String(options.core), ...node]
      : node;
  const [command, ...rest] =
    options.openFiles === undefined
      ? pinned
      : ['sh', '-c', `${raiseOpenFiles(options.openFiles)}; exec "$@"`, 'sh', ...pinned];
  const child: ChildProcess = spawn(command!, rest, {
    env: { PATH: process.env['PATH'] ?? '', ...options.env },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => (errors = (errors + chunk.toString()).slice(-4000)));
  const reap = () => child.kill('SIGKILL');
  running.add(reap);
  const ready = await new Promise<Record<string, unknown>>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${options.label} did not start: ${errors}`)),
      options.startTimeoutMs ?? 20_000,
    );
    child.on('message', (message: Record<string, unknown>) => {
      if (message['event'] !== 'listening') return;
      clearTimeout(timer);
      resolve(message);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${options.label} exited (${code}): ${errors}`));
    });
  });
  // sh and taskset exec node in their own process: the pid is the server's, not a wrapper's.
  const pid = child.pid!;
  let requests = 0;
  return {
    pid,
    ready,
    cpuMicros: () => processTreeCpuMicros(pid),
    mainThreadCpuMicros: () => mainThreadCpuMicros(pid),
    peakRssMb: () => readStatus(pid, 'VmHWM'),
    rssMb: () => readStatus(pid, 'VmRSS'),
    request(message, timeoutMs = 300_000) {
      const id = ++requests;
      return new Promise((resolve, reject) => {
        const done = () => {
          clearTimeout(timer);
          child.off('message', onMessage);
          child.off('exit', onExit);
        };
        const onMessage = (reply: Record<string, unknown>) => {
          if (reply['id'] !== id) return;
          done();
          resolve(reply);
        };
        const onExit = (code: number | null) => {
          done();
          reject(
            new Error(
              `${options.label} exited (${code}) during ${String(message['command'])}: ${errors}`,
            ),
          );
        };
        const timer = setTimeout(() => {
          done();
          reject(
            new Error(
              `${options.label}: no answer to ${String(message['command'])} in ${timeoutMs} ms`,
            ),
          );
        }, timeoutMs);
        child.on('message', onMessage);
        child.once('exit', onExit);
        child.send({ ...message, id });
      });
    },
    exited() {
      if (child.exitCode === null && child.signalCode === null) return undefined;
      return `${options.label} exited (${child.exitCode ?? child.signalCode}): ${errors.trim()}`;
    },
    async stop() {
      running.delete(reap);
      // A child killed by a signal has no exit code, only a signal code.
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

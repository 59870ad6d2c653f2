import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { processTreeCpuMicros } from './process-tree-cpu.js';

/** A server (or helper) under the benchmark, in its own process, maybe pinned to a core. */
export interface BenchProcess {
  readonly pid: number;
  /** What it announced over IPC when it was ready. */
  readonly ready: Record<string, unknown>;
  /** utime + stime so far of the process and its descendants (its tree), in microseconds. */
  cpuMicros(): number;
  /** Peak resident set size so far (VmHWM), in MB. */
  peakRssMb(): number;
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

/** Children still running: if the benchmark itself dies, they die with it. */
const running = new Set<() => void>();
process.once('exit', () => {
  for (const reap of running) reap();
});

/** Starts `node <args>` (pinned to `core` when taskset exists) and waits for its ready notice. */
export async function startProcess(
  args: readonly string[],
  options: { env?: Record<string, string>; core?: number; label: string },
): Promise<BenchProcess> {
  const node = [process.execPath, ...args];
  const [command, ...rest] =
    options.core !== undefined && hasTaskset
      ? ['taskset', '-c', String(options.core), ...node]
      : node;
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
      20_000,
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
  // taskset execs node in its own process: the pid is the server's, not a wrapper's.
  const pid = child.pid!;
  return {
    pid,
    ready,
    cpuMicros: () => processTreeCpuMicros(pid),
    peakRssMb() {
      const kb = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
      return Number(kb ?? 0) / 1024;
    },
    async stop() {
      running.delete(reap);
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

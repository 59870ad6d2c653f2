import { join } from 'node:path';
import { repoRoot } from '../test/harness/chaos-processes.js';
import { startProcess, type BenchProcess } from './bench-process.js';

/*
 * The load side of `npm run bench:events`: one process (targets/stream-client.ts) holding
 * thousands of `GET /api/events` streams over raw sockets, driven over IPC. Times cross the
 * process boundary as epoch milliseconds with sub-millisecond precision (performance.timeOrigin
 * + performance.now()): both processes read the same clock.
 */

/** Epoch milliseconds, to a fraction of one: comparable between processes on one machine. */
export const epochMs = (): number => performance.timeOrigin + performance.now();

export interface OpenCommand {
  command: 'open';
  port: number;
  path: string;
  count: number;
  /** Streams being opened at once: below the listen backlog, so no SYN waits to be resent. */
  concurrency: number;
  timeoutMs: number;
}

export interface OpenResult {
  /** Streams that got their first `channel_folders` event. */
  opened: number;
  /** The others, by why: a status, `closed`, `timeout`, an error code. */
  failures: Record<string, number>;
  ms: number;
  /** From connecting to the first `channel_folders` event, over the streams opened (null: none). */
  firstEventMs: { p50: number | null; p99: number | null; max: number | null };
  /** Streams this process holds open now, all opens together. */
  open: number;
}

export interface ArmCommand {
  command: 'arm';
  /** Text the changed list's data holds (the new folder name). */
  expect: string;
}

export interface CollectCommand {
  command: 'collect';
  timeoutMs: number;
}

export interface Arrivals {
  /** Streams open when armed. */
  armed: number;
  /** Epoch ms at which each stream that got a new `channel_folders` event got it. */
  at: number[];
  /** Of those, events whose data did not hold the expected text. */
  unexpected: number;
  /** Armed streams that ended before their new event. */
  ended: number;
}

export interface CloseResult {
  closed: number;
}

export type StreamCommand = OpenCommand | ArmCommand | CollectCommand | { command: 'close' };

export interface StreamLoad {
  readonly process: BenchProcess;
  open(port: number, count: number): Promise<OpenResult>;
  /** From now on, each stream's next event with another version is a delivery. */
  arm(expect: string): Promise<number>;
  /** Waits until every armed stream has its delivery (or `timeoutMs`), and returns the times. */
  collect(timeoutMs: number): Promise<Arrivals>;
  closeAll(): Promise<number>;
}

export async function startStreamLoad(options: {
  core: number;
  openFiles: number;
  /** How long opening one batch of streams may take in all. */
  openTimeoutMs: number;
}): Promise<StreamLoad> {
  const client = await startProcess(
    ['--import', 'tsx', join(repoRoot(), 'bench/targets/stream-client.ts')],
    { core: options.core, openFiles: options.openFiles, label: 'stream client' },
  );
  const send = async <T>(command: StreamCommand, timeoutMs: number): Promise<T> => {
    const reply = await client.request({ ...command }, timeoutMs + 30_000);
    if (typeof reply['error'] === 'string') throw new Error(`stream client: ${reply['error']}`);
    return reply as T;
  };
  return {
    process: client,
    open: (port, count) =>
      send<OpenResult>(
        {
          command: 'open',
          port,
          path: '/api/events',
          count,
          concurrency: 256,
          timeoutMs: options.openTimeoutMs,
        },
        options.openTimeoutMs,
      ),
    arm: async (expect) => (await send<{ armed: number }>({ command: 'arm', expect }, 0)).armed,
    collect: (timeoutMs) => send<Arrivals>({ command: 'collect', timeoutMs }, timeoutMs),
    closeAll: async () => (await send<CloseResult>({ command: 'close' }, 0)).closed,
  };
}

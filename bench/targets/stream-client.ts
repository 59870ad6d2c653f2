import { connect, type Socket } from 'node:net';
import { SseReader } from '../sse-reader.js';
import {
  epochMs,
  type Arrivals,
  type ArmCommand,
  type CollectCommand,
  type OpenCommand,
  type OpenResult,
  type StreamCommand,
} from '../stream-load.js';

/*
 * The load client of `npm run bench:events` (driven by stream-load.ts over IPC): holds many
 * `GET /api/events` streams open in this one process, each a raw TCP socket whose answer is
 * read with sse-reader.ts, the way a browser's EventSource holds one per page. Started under
 * a raised descriptor limit: each stream is one descriptor.
 */

interface Stream {
  socket: Socket;
  /** The version of the last `channel_folders` event. */
  version: string | undefined;
  /** Set while armed: the version the stream had when armed. */
  armedVersion: string | undefined;
  armed: boolean;
  /** When its first event with another version than `armedVersion` came. */
  changedAt: number | undefined;
  ended: boolean;
}

const streams = new Set<Stream>();
let expected = '';
let armedCount = 0;
let settledCount = 0;
const arrivals: number[] = [];
let unexpected = 0;
let endedArmed = 0;
/** Called whenever an armed stream settles (its delivery came, or it ended). */
let onSettled: (() => void) | undefined;

function settle(): void {
  settledCount += 1;
  onSettled?.();
}

/** Opens one stream; resolves with `ok` on its first `channel_folders` event, else why not. */
function openOne(command: OpenCommand, deadline: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port: command.port });
    const stream: Stream = {
      socket,
      version: undefined,
      armedVersion: undefined,
      armed: false,
      changedAt: undefined,
      ended: false,
    };
    let outcome: string | undefined;
    const done = (result: string) => {
      if (outcome !== undefined) return;
      outcome = result;
      clearTimeout(timer);
      if (result !== 'ok') socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => done('timeout'), Math.max(0, deadline - Date.now()));
    const end = () => {
      if (stream.ended) return;
      stream.ended = true;
      streams.delete(stream);
      if (stream.armed && stream.changedAt === undefined) {
        endedArmed += 1;
        settle();
      }
    };
    const reader = new SseReader({
      onHead: (status) => {
        if (status !== 200) done(`status ${status}`);
      },
      onEvent: (event) => {
        if (event.event !== 'channel_folders') return;
        const at = epochMs();
        if (stream.armed && stream.changedAt === undefined && event.id !== stream.armedVersion) {
          stream.changedAt = at;
          arrivals.push(at);
          if (!event.data.includes(expected)) unexpected += 1;
          settle();
        }
        stream.version = event.id;
        if (outcome === undefined) {
          streams.add(stream);
          done('ok');
        }
      },
      onEnd: (reason) => {
        done(reason);
        socket.destroy();
      },
    });
    socket.setNoDelay(true);
    socket.on('connect', () => {
      socket.write(
        `GET ${command.path} HTTP/1.1\r\nHost: 127.0.0.1:${command.port}\r\nAccept: text/event-stream\r\n\r\n`,
      );
    });
    socket.on('data', (chunk: Buffer) => reader.push(chunk));
    socket.on('error', (error: NodeJS.ErrnoException) => done(error.code ?? 'error'));
    socket.on('close', () => {
      done('closed');
      end();
    });
  });
}

async function open(command: OpenCommand): Promise<OpenResult> {
  const started = epochMs();
  const deadline = Date.now() + command.timeoutMs;
  const failures: Record<string, number> = {};
  const waits: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < command.count) {
      next += 1;
      const start = epochMs();
      const result = await openOne(command, deadline);
      if (result === 'ok') waits.push(epochMs() - start);
      else failures[result] = (failures[result] ?? 0) + 1;
    }
  };
  const workers = Math.max(1, Math.min(command.concurrency, command.count));
  await Promise.all(Array.from({ length: workers }, worker));
  waits.sort((a, b) => a - b);
  const at = (p: number) => waits[Math.max(0, Math.ceil(p * waits.length) - 1)] ?? Number.NaN;
  return {
    opened: waits.length,
    failures,
    ms: epochMs() - started,
    firstEventMs: { p50: at(0.5), p99: at(0.99), max: at(1) },
    open: streams.size,
  };
}

function arm(command: ArmCommand): { armed: number } {
  expected = command.expect;
  arrivals.length = 0;
  unexpected = endedArmed = settledCount = 0;
  for (const stream of streams) {
    stream.armed = true;
    stream.armedVersion = stream.version;
    stream.changedAt = undefined;
  }
  armedCount = streams.size;
  return { armed: armedCount };
}

async function collect(command: CollectCommand): Promise<Arrivals> {
  if (settledCount < armedCount) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, command.timeoutMs);
      onSettled = () => {
        if (settledCount < armedCount) return;
        clearTimeout(timer);
        resolve();
      };
    });
    onSettled = undefined;
  }
  for (const stream of streams) stream.armed = false;
  return { armed: armedCount, at: [...arrivals], unexpected, ended: endedArmed };
}

function closeAll(): { closed: number } {
  const closed = streams.size;
  for (const stream of [...streams]) stream.socket.destroy();
  streams.clear();
  return { closed };
}

async function handle(command: StreamCommand): Promise<object> {
  switch (command.command) {
    case 'open':
      return open(command);
    case 'arm':
      return arm(command);
    case 'collect':
      return collect(command);
    case 'close':
      return closeAll();
  }
}

process.on('message', (message: StreamCommand & { id: number }) => {
  handle(message).then(
    (reply) => process.send?.({ ...reply, id: message.id }),
    (error: unknown) => process.send?.({ error: String(error), id: message.id }),
  );
});
process.on('SIGTERM', () => {
  closeAll();
  process.exit(0);
});
process.send?.({ event: 'listening' });

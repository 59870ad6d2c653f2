import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { spreadOver } from './spread-over.js';
import {
  statusOf,
  zeroCounts,
  type EventHubStatus,
  type StreamCloseReason,
  type StreamRefusal,
} from './stream-counts.js';

/** The folder list a stream follows: with or without archived folders. */
export type FolderVariant = 'archived' | 'active';
export const variantOf = (includeArchived: boolean): FolderVariant =>
  includeArchived ? 'archived' : 'active';

export interface Stream {
  readonly res: ServerResponse;
  readonly variant: FolderVariant;
  readonly session: string | undefined;
  /** Whom the stream counts against (EVENTS_MAX_STREAMS_PER_CLIENT), when anyone. */
  readonly client: string | undefined;
  /** The version this stream was last sent (or said it had). */
  version: string | undefined;
  /** When it was last written to: heartbeats go to streams idle for a beat. */
  lastWrite: number;
  closed: boolean;
}

export interface StreamSet {
  /** Adds an open stream; it leaves the set when it closes, for whatever reason. */
  add(
    res: ServerResponse,
    variant: FolderVariant,
    session: string | undefined,
    version?: string,
    client?: string,
  ): Stream;
  /** Writes to one stream; a reader that let too much pile up is dropped instead. */
  write(stream: Stream, bytes: Buffer): void;
  /** Sends an event of `version` unless the stream has it already. */
  send(stream: Stream, version: string, event: Buffer): void;
  close(stream: Stream, reason: StreamCloseReason): void;
  closeAll(reason: StreamCloseReason): void;
  /**
   * Ends every open stream at its own moment within `withinMs` (0: at once); resolves once the
   * last has ended.
   */
  closeSpread(withinMs: number, reason: StreamCloseReason): Promise<void>;
  /** Open streams that count against `client`. */
  heldBy(client: string): number;
  /** Counts a stream refused before it opened. */
  refuse(refusal: StreamRefusal): void;
  /** The open streams of a variant, read off the live set (a stream closed meanwhile is skipped). */
  following(variant: FolderVariant): Iterable<Stream>;
  /** Whether any open stream follows the variant. */
  isFollowed(variant: FolderVariant): boolean;
  readonly size: number;
  status(): EventHubStatus;
}

export const EVENT = 'channel_folders';
const HEARTBEAT = Buffer.from(':\n\n');
/**
 * Heartbeats are written this many streams at a time, the event loop free in between: written
 * in one loop, 10,000 idle streams' heartbeats held every request for ~200 ms once a beat.
 */
export const HEARTBEAT_SLICE = 256;

export interface StreamSetOptions {
  /** A stream whose unsent bytes pass this is dropped: a reader that stopped reading. */
  maxUnsentBytes: number;
  heartbeatMs: number;
  /** Which of these sessions still exist (logout, rotation and expiry on any instance). */
  sessionsAlive?: ((sessions: readonly string[]) => Promise<boolean[]>) | undefined;
  /** How often open streams' sessions are checked (contract: ended within 2 s). */
  sessionCheckMs: number;
  /** Where a stop's spread of stream ends comes from (default Math.random). */
  random?: () => number;
  logger: Logger;
}

/**
 * The open streams of an instance, what was sent to them and why they ended. Heartbeats and
 * session checks run on one timer each for all streams, and only while any is open.
 */
export function createStreamSet(options: StreamSetOptions): StreamSet {
  const streams = new Set<Stream>();
  const random = options.random ?? Math.random;
  /** Open streams per client, for EVENTS_MAX_STREAMS_PER_CLIENT; a client with none has no entry. */
  const held = new Map<string, number>();
  const counts = zeroCounts(EVENT);
  const { sessionsAlive } = options;
  const checkSessions = sessionsAlive
    ? createSessionCheck(streams, sessionsAlive, close, options.logger)
    : undefined;

  const beat = () => heartbeatInSlices(idleStreams(streams, options.heartbeatMs), write);
  const timers = createTimers(beat, options.heartbeatMs, checkSessions, options.sessionCheckMs);

  function close(stream: Stream, reason: StreamCloseReason): void {
    if (stream.closed) return;
    stream.closed = true;
    streams.delete(stream);
    counts.closed[reason] += 1;
    if (stream.client !== undefined) release(held, stream.client);
    if (reason === 'slow' || reason === 'error') stream.res.destroy();
    else stream.res.end();
    if (streams.size === 0) timers.stop();
  }

  function write(stream: Stream, bytes: Buffer): void {
    if (stream.closed) return;
    if (stream.res.writableLength + bytes.length > options.maxUnsentBytes) {
      close(stream, 'slow');
      return;
    }
    stream.res.write(bytes);
    stream.lastWrite = Date.now();
  }

  return {
    add(res, variant, session, version, client) {
      const stream = openStream(res, variant, session, version, client);
      streams.add(stream);
      if (client !== undefined) held.set(client, (held.get(client) ?? 0) + 1);
      timers.start();
      res.once('close', () => close(stream, 'client'));
      res.on('error', () => close(stream, 'error'));
      return stream;
    },
    write,
    send(stream, version, event) {
      if (stream.version === version) return;
      write(stream, event);
      if (stream.closed) return;
      stream.version = version;
      counts.sent[EVENT]! += 1;
    },
    close,
    closeAll(reason) {
      // A copy: each close takes its stream out of the set.
      for (const stream of Array.from(streams)) close(stream, reason);
    },
    closeSpread(withinMs, reason) {
      return spreadOver([...streams], withinMs, random, (stream) => close(stream, reason));
    },
    heldBy: (client) => held.get(client) ?? 0,
    refuse(refusal) {
      counts.refused[refusal] += 1;
    },
    *following(variant) {
      for (const stream of streams) if (stream.variant === variant) yield stream;
    },
    isFollowed(variant) {
      for (const stream of streams) if (stream.variant === variant) return true;
      return false;
    },
    get size() {
      return streams.size;
    },
    status: () => statusOf(streams.size, counts),
  };
}

function openStream(
  res: ServerResponse,
  variant: FolderVariant,
  session: string | undefined,
  version: string | undefined,
  client: string | undefined,
): Stream {
  return { res, variant, session, client, version, lastWrite: Date.now(), closed: false };
}

/** Takes one stream off `client`'s count; a client with none left has no entry. */
function release(held: Map<string, number>, client: string): void {
  const left = (held.get(client) ?? 1) - 1;
  if (left > 0) held.set(client, left);
  else held.delete(client);
}

/** The streams nothing was written to for half a beat: the ones a heartbeat is due to. */
function idleStreams(streams: ReadonlySet<Stream>, heartbeatMs: number): Stream[] {
  const idleSince = Date.now() - heartbeatMs / 2;
  return [...streams].filter((stream) => stream.lastWrite <= idleSince);
}

/** The heartbeat and session-check timers, one each for all streams: started by the first. */
function createTimers(
  beat: () => void,
  heartbeatMs: number,
  checkSessions: (() => Promise<void>) | undefined,
  sessionCheckMs: number,
): { start(): void; stop(): void } {
  let heartbeat: NodeJS.Timeout | undefined;
  let sessionCheck: NodeJS.Timeout | undefined;
  return {
    start() {
      heartbeat ??= setInterval(beat, heartbeatMs).unref();
      if (checkSessions) {
        sessionCheck ??= setInterval(() => void checkSessions(), sessionCheckMs).unref();
      }
    },
    stop() {
      clearInterval(heartbeat);
      clearInterval(sessionCheck);
      heartbeat = sessionCheck = undefined;
    },
  };
}

/** A heartbeat to each of `due`, a slice at a time; `write` skips a stream closed meanwhile. */
function heartbeatInSlices(
  due: readonly Stream[],
  write: (stream: Stream, bytes: Buffer) => void,
  from = 0,
): void {
  const to = Math.min(from + HEARTBEAT_SLICE, due.length);
  for (let i = from; i < to; i += 1) write(due[i]!, HEARTBEAT);
  if (to < due.length) setImmediate(() => heartbeatInSlices(due, write, to));
}

/**
 * Ends the streams whose sessions ended, one check at a time. A store that cannot tell keeps
 * them open: unknown is not "logged out" (contract section 4).
 */
function createSessionCheck(
  streams: ReadonlySet<Stream>,
  sessionsAlive: (sessions: readonly string[]) => Promise<boolean[]>,
  close: (stream: Stream, reason: StreamCloseReason) => void,
  logger: Logger,
): () => Promise<void> {
  let checking = false;
  return async () => {
    if (checking) return;
    checking = true;
    try {
      const bound = [...streams].filter((s) => s.session !== undefined);
      const ids = [...new Set(bound.map((s) => s.session!))];
      if (ids.length === 0) return;
      const alive = await sessionsAlive(ids);
      const ended = new Set(ids.filter((_, i) => alive[i] === false));
      for (const stream of bound) if (ended.has(stream.session!)) close(stream, 'session');
    } catch (error) {
      logger.warn({ err: error }, 'event streams: session check failed; kept open');
    } finally {
      checking = false;
    }
  };
}

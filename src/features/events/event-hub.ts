import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Representation } from '../../cache/cache-entry.js';

/** Why an open stream ended (the `reason` label of gateway_event_streams_closed_total). */
export type StreamCloseReason = 'client' | 'slow' | 'session' | 'shutdown' | 'error';
export const STREAM_CLOSE_REASONS: readonly StreamCloseReason[] = [
  'client',
  'slow',
  'session',
  'shutdown',
  'error',
];

/** What the hub counts, read by the metrics at each scrape. */
export interface EventHubStatus {
  open: number;
  /** Events written to streams, by event name (heartbeats not counted). */
  sent: Readonly<Record<string, number>>;
  closed: Readonly<Record<StreamCloseReason, number>>;
}

/** The folder list a stream follows: with or without archived folders. */
export type FolderVariant = 'archived' | 'active';
export const variantOf = (includeArchived: boolean): FolderVariant =>
  includeArchived ? 'archived' : 'active';

export interface StreamOptions {
  variant: FolderVariant;
  /** The version the client says it has (`Last-Event-ID`): not sent again. */
  lastEventId: string | undefined;
  /** The session the stream belongs to (session mode), checked while the stream is open. */
  session?: string | undefined;
  /** The list as it is now, fetched for this caller; undefined when none can be had yet. */
  current(): Promise<Representation | undefined>;
}

export interface EventHub {
  /** Takes over `res` (headers not yet sent) as an open stream until one side ends it. */
  open(res: ServerResponse, options: StreamOptions): void;
  readonly size: number;
  /**
   * The list of `variant` may have changed (a chat event, a refresh): re-read it once for the
   * instance and push it to the variant's streams if its bytes differ from what they have.
   */
  changed(variant: FolderVariant): Promise<void>;
  /** Ends every stream at once (a stop). */
  closeAll(reason: StreamCloseReason): void;
  status(): EventHubStatus;
}

export interface EventHubOptions {
  /** Reads the variant's current list from the shared cache (no upstream call). */
  read(variant: FolderVariant): Promise<Representation | undefined>;
  /** Which of these sessions still exist (logout, rotation and expiry on any instance). */
  sessionsAlive?(sessions: readonly string[]): Promise<boolean[]>;
  /** `retry:` sent first (contract: 1000–30000 ms). */
  retryMs: number;
  heartbeatMs: number;
  /** A stream whose unsent bytes pass this is dropped: a reader that stopped reading. */
  maxUnsentBytes: number;
  /** How often open streams' sessions are checked (contract: ended within 2 s). */
  sessionCheckMs: number;
  logger: Logger;
}

interface Stream {
  readonly res: ServerResponse;
  readonly variant: FolderVariant;
  readonly session: string | undefined;
  /** The version this stream was last sent (or said it had). */
  version: string | undefined;
  /** When it was last written to: heartbeats go to streams idle for a beat. */
  lastWrite: number;
  closed: boolean;
}

const EVENT = 'channel_folders';
const HEARTBEAT = Buffer.from(':\n\n');

/** One `channel_folders` event: the version as id, the body on one line (compact JSON). */
function eventOf(representation: Representation): Buffer {
  return Buffer.concat([
    Buffer.from(`id: ${representation.digest}\nevent: ${EVENT}\ndata: `),
    representation.body,
    Buffer.from('\n\n'),
  ]);
}

/**
 * Node builds a response's head by appending one piece at a time and keeps the result as long
 * as the response lives: for a stream, hours. Unflattened, that is ~90 string fragments, about
 * 2.3 KiB of a stream's heap (measured with heap snapshots); reading one character makes V8
 * flatten it in place into one string of the head's length.
 */
function flattenHead(res: ServerResponse): void {
  const head = (res as unknown as { _header?: unknown })._header;
  if (typeof head === 'string') head.charCodeAt(0);
}

/**
 * Server-sent events for every open page of this instance (contract section 2.2). A change is
 * read once per instance and written to each stream as the same bytes; an idle stream holds no
 * buffer of its own, only its socket. Heartbeats and session checks run on one timer each for
 * all streams.
 */
export function createEventHub(options: EventHubOptions): EventHub {
  const { logger } = options;
  const streams = new Set<Stream>();
  const sent: Record<string, number> = { [EVENT]: 0 };
  const closed: Record<StreamCloseReason, number> = {
    client: 0,
    slow: 0,
    session: 0,
    shutdown: 0,
    error: 0,
  };
  /** The last version this instance pushed per variant, and its event bytes. */
  const latest = new Map<FolderVariant, { version: string; event: Buffer }>();

  let heartbeat: NodeJS.Timeout | undefined;
  let sessionCheck: NodeJS.Timeout | undefined;
  const startTimers = () => {
    heartbeat ??= setInterval(beat, options.heartbeatMs).unref();
    if (options.sessionsAlive)
      sessionCheck ??= setInterval(() => void checkSessions(), options.sessionCheckMs).unref();
  };
  const stopTimersIfIdle = () => {
    if (streams.size > 0) return;
    clearInterval(heartbeat);
    clearInterval(sessionCheck);
    heartbeat = sessionCheck = undefined;
  };

  function close(stream: Stream, reason: StreamCloseReason): void {
    if (stream.closed) return;
    stream.closed = true;
    streams.delete(stream);
    closed[reason] += 1;
    if (reason === 'slow' || reason === 'error') stream.res.destroy();
    else stream.res.end();
    stopTimersIfIdle();
  }

  /** Writes to one stream; a reader that let too much pile up is dropped instead. */
  function write(stream: Stream, bytes: Buffer): void {
    if (stream.closed) return;
    if (stream.res.writableLength + bytes.length > options.maxUnsentBytes) {
      close(stream, 'slow');
      return;
    }
    stream.res.write(bytes);
    stream.lastWrite = Date.now();
  }

  function send(stream: Stream, version: string, event: Buffer): void {
    if (stream.version === version) return;
    write(stream, event);
    if (stream.closed) return;
    stream.version = version;
    sent[EVENT]! += 1;
  }

  function beat(): void {
    const idleSince = Date.now() - options.heartbeatMs / 2;
    for (const stream of streams) if (stream.lastWrite <= idleSince) write(stream, HEARTBEAT);
  }

  let checking = false;
  async function checkSessions(): Promise<void> {
    if (checking || !options.sessionsAlive) return;
    checking = true;
    try {
      const bound = [...streams].filter((s) => s.session !== undefined);
      const ids = [...new Set(bound.map((s) => s.session!))];
      if (ids.length === 0) return;
      const alive = await options.sessionsAlive(ids);
      const ended = new Set(ids.filter((_, i) => alive[i] === false));
      for (const stream of bound) if (ended.has(stream.session!)) close(stream, 'session');
    } catch (error) {
      // Unknown is not "logged out" (contract section 4): streams stay until it can be told.
      logger.warn({ err: error }, 'event streams: session check failed; kept open');
    } finally {
      checking = false;
    }
  }

  /**
   * Sends a stream its first event: the version it lacks, as soon as one can be had. While
   * streams of a variant are open, `latest` follows every change, so it is the list to send;
   * otherwise the caller's own read is.
   */
  async function catchUp(stream: Stream, current: () => Promise<Representation | undefined>) {
    let known = latest.get(stream.variant);
    if (known === undefined) {
      let representation: Representation | undefined;
      try {
        representation = await current();
      } catch (error) {
        // No list yet (cache empty, chat unreachable): the stream stays open and the next
        // change brings it (contract section 2.2).
        logger.debug({ err: error }, 'event stream: no folder list yet');
      }
      if (representation === undefined || stream.closed) return;
      // A change that landed during the read is newer than the read.
      known = latest.get(stream.variant) ?? remember(stream.variant, representation);
    }
    send(stream, known.version, known.event);
  }

  function remember(variant: FolderVariant, representation: Representation) {
    const known = { version: representation.digest, event: eventOf(representation) };
    latest.set(variant, known);
    return known;
  }

  const hasStreams = (variant: FolderVariant) => {
    for (const stream of streams) if (stream.variant === variant) return true;
    return false;
  };

  return {
    open(res, stream) {
      const entry: Stream = {
        res,
        variant: stream.variant,
        session: stream.session,
        version: stream.lastEventId,
        lastWrite: Date.now(),
        closed: false,
      };
      streams.add(entry);
      startTimers();
      res.once('close', () => close(entry, 'client'));
      res.on('error', () => close(entry, 'error'));
      res.writeHead(200, {
        'Content-Type': 'text/event-stream; charset=utf-8',
        'Cache-Control': 'no-store',
        // nginx and its kind must pass each event on as it comes (docs/frontend.md, live updates).
        'X-Accel-Buffering': 'no',
      });
      write(entry, Buffer.from(`retry: ${options.retryMs}\n\n`));
      flattenHead(res);
      void catchUp(entry, () => stream.current());
    },
    get size() {
      return streams.size;
    },
    async changed(variant) {
      if (!hasStreams(variant)) {
        // Nobody follows it here: the next stream reads the list itself.
        latest.delete(variant);
        return;
      }
      let representation: Representation | undefined;
      try {
        representation = await options.read(variant);
      } catch (error) {
        logger.warn({ err: error }, 'event streams: folder list unreadable; not pushed');
        return;
      }
      if (representation === undefined) return;
      if (latest.get(variant)?.version === representation.digest) return; // the same bytes
      const { version, event } = remember(variant, representation);
      for (const stream of streams) if (stream.variant === variant) send(stream, version, event);
    },
    closeAll(reason) {
      for (const stream of [...streams]) close(stream, reason);
    },
    status: () => ({ open: streams.size, sent: { ...sent }, closed: { ...closed } }),
  };
}

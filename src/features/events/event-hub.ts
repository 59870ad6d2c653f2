import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Representation } from '../../cache/cache-entry.js';
import type { EventHubStatus, StreamCloseReason, StreamRefusal } from './stream-counts.js';
import { createStreamSet, EVENT, type FolderVariant, type Stream } from './stream-set.js';

/** A stream's head (contract section 2.2); a HEAD request gets it alone. */
export const STREAM_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-store',
  // nginx and its kind must pass each event on as it comes (docs/frontend.md, live updates).
  'X-Accel-Buffering': 'no',
};

export interface StreamOptions {
  variant: FolderVariant;
  /** The version the client says it has (`Last-Event-ID`): not sent again. */
  lastEventId: string | undefined;
  /** The session the stream belongs to (session mode), checked while the stream is open. */
  session?: string | undefined;
  /** Whom the stream counts against (EVENTS_MAX_STREAMS_PER_CLIENT), when anyone. */
  client?: string | undefined;
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
  /** Ends every stream at once. */
  closeAll(reason: StreamCloseReason): void;
  /**
   * A stop: ends each stream at its own moment within `withinMs` (contract section 2.2);
   * resolves once the last has ended.
   */
  closeSpread(withinMs: number): Promise<void>;
  /** Open streams that count against `client`. */
  heldBy(client: string): number;
  /** Counts a stream refused before it opened. */
  refuse(refusal: StreamRefusal): void;
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
  /** Where a stop's spread of stream ends comes from (default Math.random). */
  random?: () => number;
  logger: Logger;
}

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
  const streams = createStreamSet(options);
  /** The last version this instance pushed per variant, and its event bytes. */
  const latest = new Map<FolderVariant, { version: string; event: Buffer }>();

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
    streams.send(stream, known.version, known.event);
  }

  function remember(variant: FolderVariant, representation: Representation) {
    const known = { version: representation.digest, event: eventOf(representation) };
    latest.set(variant, known);
    return known;
  }

  return {
    open(res, wanted) {
      const stream = streams.add(
        res,
        wanted.variant,
        wanted.session,
        wanted.lastEventId,
        wanted.client,
      );
      res.writeHead(200, STREAM_HEADERS);
      streams.write(stream, Buffer.from(`retry: ${options.retryMs}\n\n`));
      flattenHead(res);
      void catchUp(stream, () => wanted.current());
    },
    get size() {
      return streams.size;
    },
    async changed(variant) {
      if (!streams.isFollowed(variant)) {
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
      for (const stream of streams.following(variant)) streams.send(stream, version, event);
    },
    closeAll: (reason) => streams.closeAll(reason),
    closeSpread: (withinMs) => streams.closeSpread(withinMs, 'shutdown'),
    heldBy: (client) => streams.heldBy(client),
    refuse: (refusal) => streams.refuse(refusal),
    status: () => streams.status(),
  };
}

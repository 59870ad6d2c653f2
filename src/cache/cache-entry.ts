import { createHash } from 'node:crypto';
import { z } from 'zod';
import { parseWith } from '../errors/parse-with.js';
import type { Logger } from 'pino';
import type { EncodedBodies } from './encodings.js';

/** The only media types the gateway caches; anything else in a stored entry makes it corrupt. */
export const CACHED_CONTENT_TYPES = [
  'application/json; charset=utf-8',
  'application/ld+json; charset=utf-8',
] as const;
export type CachedContentType = (typeof CACHED_CONTENT_TYPES)[number];

/**
 * A response body ready to send, exactly the bytes that go on the wire and into the cache,
 * with the headers that belong to the resource itself: its media type and its digest (the
 * strong validator behind the ETag). Headers that belong to one request are never stored.
 */
export interface Representation {
  readonly body: Buffer;
  readonly contentType: CachedContentType;
  /** base64url SHA-256 of `body`. */
  readonly digest: string;
  /**
   * `body` compressed as br and gzip, each once made: kept with a stored entry, so that only
   * the first answer in a coding compresses (docs/reliability.md, Compression). None on a fresh load nor
   * with COMPRESSION=off.
   */
  readonly encoded?: EncodedBodies;
}

/**
 * An entry's bodies as the body layer holds them (body-layer.ts): the identity body its
 * digest names and the compressed ones that went with it.
 */
export interface EntryBodies {
  readonly identity: Buffer;
  readonly encoded?: EncodedBodies;
}

/** A cached representation and its windows, as epoch milliseconds. */
export interface CacheEntry extends Representation {
  readonly storedAt: number;
  /** Served as a HIT until then. */
  readonly freshUntil: number;
  /** Served as STALE (with one background refresh) until then. */
  readonly staleUntil: number;
  /** Served only when the upstream fails, until then. */
  readonly errorUntil: number;
}

/** Lets go of a representation's body (releaseBody); none for one that cannot. */
const releasers = new WeakMap<Representation, () => void>();

/** A representation whose body one owner can let go of (`releaseBody`). */
function releasable(body: Buffer, contentType: CachedContentType, digest: string): Representation {
  let held: Buffer | undefined = body;
  const representation: Representation = {
    get body(): Buffer {
      if (held === undefined)
        throw new Error('a representation body was read after its owner let go of it');
      return held;
    },
    contentType,
    digest,
  };
  releasers.set(representation, () => (held = undefined));
  return representation;
}

/**
 * The one way a representation is made: serialised once, digested once. What a load makes is
 * shared by the requests that took the load and by its cache write; the load lets go of its
 * body once the write has settled (instance-loads.ts), and each request reads through its own hold
 * (`takeRepresentation`).
 */
export function toRepresentation(value: unknown, contentType: CachedContentType): Representation {
  const body = Buffer.from(JSON.stringify(value), 'utf8');
  return releasable(body, contentType, createHash('sha256').update(body).digest('base64url'));
}

/**
 * A request's own hold on a load's representation, taken as the load answers it (in the same
 * run of promise jobs, before the load can let go): it keeps the body for as long as the
 * request holds it, whatever the load does, and the request may let go of it in turn once it
 * has sent it (`releaseBody`). A stored entry is handed out as it is: nobody lets go of one.
 */
export function takeRepresentation(representation: Representation): Representation {
  if (!releasers.has(representation)) return representation;
  return releasable(representation.body, representation.contentType, representation.digest);
}

/**
 * Lets go of a representation's body; nothing for one that cannot (a stored entry). A request
 * in flight lives ~40 ms and a scavenge comes every ~49, so the promises and async frames a
 * miss makes at its start are often promoted before its body exists; once they are resolved
 * with the representation, a scavenge keeps whatever they point at, alive or not, until the
 * next full collection, and those ~20 KB bodies outside V8's heap filled most of the heap
 * cap's room between full collections (docs/performance.md, "Settled by measurement"). Letting go
 * empties the representation, so what still points at it keeps nothing. A read after this
 * throws, so that a reader that came too late fails loudly rather than sending nothing.
 */
export function releaseBody(representation: Representation): void {
  releasers.get(representation)?.();
}

const EntryHeader = z.strictObject({
  v: z.literal(3),
  storedAt: z.number().int().nonnegative(),
  freshUntil: z.number().int().nonnegative(),
  staleUntil: z.number().int().nonnegative(),
  errorUntil: z.number().int().nonnegative(),
  contentType: z.enum(CACHED_CONTENT_TYPES),
  digest: z.string().regex(/^[A-Za-z0-9_-]{43}$/),
  length: z.number().int().nonnegative(),
  /** 0 for a coding the entry holds no body in (not yet asked for, or COMPRESSION=off). */
  brLength: z.number().int().nonnegative(),
  gzipLength: z.number().int().nonnegative(),
});

const NEWLINE = 0x0a;

/**
 * Wire form: one JSON line of metadata, a newline, then the identity body, the br body and the
 * gzip body verbatim, one after the other, each compressed one only once made (length 0). A hit reads the short header and slices the bodies
 * without copying or parsing them; the lengths guard against truncated or foreign values.
 * The header line stays far below the 1024 bytes the hit path's script reads of it, and keeps
 * `"digest":"<digest>"` as that script looks for it (redis-shared-state.ts).
 */
export function encodeEntry(entry: CacheEntry): Buffer {
  return joinedParts(entryParts(entry));
}

/** The wire form from its two parts (entryParts), for a write that sends it whole. */
export function joinedParts({ header, bodies }: { header: string; bodies: Buffer }): Buffer {
  return Buffer.concat([Buffer.from(header), bodies]);
}

/**
 * The wire form in its two parts: the header line (newline included) and the bodies after it.
 * A miss's write sends them as two arguments and Redis joins them (redis-cache-store.ts), so
 * the gateway makes no copy of the body for the write: an entry without compressed bodies
 * (every fresh load) sends the very Buffer its answer was sent from.
 */
export function entryParts(entry: CacheEntry): { header: string; bodies: Buffer } {
  const { body } = entry;
  const br = entry.encoded?.br;
  const gzip = entry.encoded?.gzip;
  const header = {
    v: 3,
    storedAt: entry.storedAt,
    freshUntil: entry.freshUntil,
    staleUntil: entry.staleUntil,
    errorUntil: entry.errorUntil,
    contentType: entry.contentType,
    digest: entry.digest,
    length: body.length,
    brLength: br?.length ?? 0,
    gzipLength: gzip?.length ?? 0,
  } satisfies z.input<typeof EntryHeader>;
  const compressed = [br, gzip].filter((b): b is Buffer => b !== undefined);
  return {
    header: `${JSON.stringify(header)}\n`,
    bodies: compressed.length === 0 ? body : Buffer.concat([body, ...compressed]),
  };
}

/**
 * Undefined for anything that is not an intact entry of this version. `known` stands in for
 * the bodies when `raw` holds only the header line because the reader already has the bodies
 * its digest names (body-layer.ts). Its compressed bodies are used even when the stored entry's
 * were made differently (another instance's settings): they compress the same identity bytes.
 */
export function decodeEntry(raw: Buffer, known?: EntryBodies): CacheEntry | undefined {
  const newline = raw.indexOf(NEWLINE);
  if (newline < 0) return undefined;
  const header = readHeader(raw, newline);
  if (header === undefined) return undefined;
  // `v` is taken out so that it does not end up in the entry.
  const { v: _version, length, brLength, gzipLength, ...rest } = header;
  if (known !== undefined) return withKnownBodies(rest, length, known);
  return withStoredBodies(rest, raw.subarray(newline + 1), length, brLength, gzipLength);
}

type EntryHeader = z.output<typeof EntryHeader>;
/** The header's fields that the entry carries as they are. */
type EntryFields = Omit<EntryHeader, 'v' | 'length' | 'brLength' | 'gzipLength'>;

/** The header line before `newline`, or undefined when it is not JSON or not this version's. */
function readHeader(raw: Buffer, newline: number): EntryHeader | undefined {
  let headerJson: unknown;
  try {
    headerJson = JSON.parse(raw.toString('utf8', 0, newline));
  } catch {
    return undefined;
  }
  return parseWith(EntryHeader, headerJson, () => undefined);
}

function withKnownBodies(
  fields: EntryFields,
  length: number,
  known: EntryBodies,
): CacheEntry | undefined {
  if (known.identity.length !== length) return undefined;
  return { ...fields, body: known.identity, ...(known.encoded ? { encoded: known.encoded } : {}) };
}

/** `bodies`: everything after the header line, which must be exactly the three bodies. */
function withStoredBodies(
  fields: EntryFields,
  bodies: Buffer,
  length: number,
  brLength: number,
  gzipLength: number,
): CacheEntry | undefined {
  if (bodies.length !== length + brLength + gzipLength) return undefined;
  const body = bodies.subarray(0, length);
  if (brLength === 0 && gzipLength === 0) return { ...fields, body };
  const encoded = {
    ...(brLength > 0 ? { br: bodies.subarray(length, length + brLength) } : {}),
    ...(gzipLength > 0 ? { gzip: bodies.subarray(length + brLength) } : {}),
  };
  return { ...fields, body, encoded };
}

/**
 * A value read from the store as an entry, for the hit's read and the miss's alike: anything
 * that is not an intact entry of this version (or, when only its header was read, not the
 * bodies `known` holds) is a miss with one warning, never a failed request (contract section 4).
 */
export function readStoredEntry(
  raw: Buffer,
  key: string,
  log: Logger,
  known?: { readonly bodies: EntryBodies; readonly digest: string },
): CacheEntry | undefined {
  const entry = decodeEntry(raw, known?.bodies);
  if (entry !== undefined && (known === undefined || entry.digest === known.digest)) return entry;
  log.warn({ key }, 'corrupt cache entry ignored; treating as a miss');
  return undefined;
}

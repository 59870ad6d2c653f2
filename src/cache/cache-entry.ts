import { createHash } from 'node:crypto';
import { z } from 'zod';
import { parseWith } from '../errors/parse-with.js';

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

/** The one way a representation is made: serialised once, digested once. */
export function toRepresentation(value: unknown, contentType: CachedContentType): Representation {
  const body = Buffer.from(JSON.stringify(value), 'utf8');
  return { body, contentType, digest: createHash('sha256').update(body).digest('base64url') };
}

const EntryHeader = z.strictObject({
  v: z.literal(2),
  storedAt: z.number().int().nonnegative(),
  freshUntil: z.number().int().nonnegative(),
  staleUntil: z.number().int().nonnegative(),
  errorUntil: z.number().int().nonnegative(),
  contentType: z.enum(CACHED_CONTENT_TYPES),
  digest: z.string().regex(/^[A-Za-z0-9_-]{43}$/),
  length: z.number().int().nonnegative(),
});

const NEWLINE = 0x0a;

/**
 * Wire form: one JSON line of metadata, a newline, then the body bytes verbatim. A hit reads
 * the short header and slices the body without copying or parsing it; the length guards
 * against truncated or foreign values.
 */
export function encodeEntry(entry: CacheEntry): Buffer {
  const { body, ...rest } = entry;
  const header = Buffer.from(`${JSON.stringify({ v: 2, ...rest, length: body.length })}\n`);
  return Buffer.concat([header, body]);
}

/**
 * Undefined for anything that is not an intact entry of this version. `knownBody` stands in
 * for the body when `raw` holds only the header line because the reader already has the body
 * its digest names (body-layer.ts).
 */
export function decodeEntry(raw: Buffer, knownBody?: Buffer): CacheEntry | undefined {
  const newline = raw.indexOf(NEWLINE);
  if (newline < 0) return undefined;
  let headerJson: unknown;
  try {
    headerJson = JSON.parse(raw.toString('utf8', 0, newline));
  } catch {
    return undefined;
  }
  const header = parseWith(EntryHeader, headerJson, () => undefined);
  if (header === undefined) return undefined;
  const body = knownBody ?? raw.subarray(newline + 1);
  if (body.length !== header.length) return undefined;
  const { v, length, ...rest } = header;
  return { ...rest, body };
}

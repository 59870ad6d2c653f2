import type { IncomingMessage, ServerResponse } from 'node:http';
import vary from 'vary';
import type { Representation } from '../cache/cache-entry.js';

export type CacheStatus = 'HIT' | 'MISS' | 'STALE';

/** How a cached answer was made, in RFC 9211 terms (contract section 4). */
export interface CacheOutcome {
  readonly cacheStatus: CacheStatus;
  /** The parameters after `bff; ` in `Cache-Status`, e.g. `hit; ttl=42` or `fwd=miss; stored`. */
  readonly cacheStatusParams: string;
}

/** The strong validator of a representation: its digest, quoted (RFC 9110 §8.8.3). */
export const etagOf = (representation: Representation) => `"${representation.digest}"`;

/**
 * `If-None-Match` compared weakly (RFC 9110 §13.1.2): `*`, or any listed entity-tag whose
 * opaque part equals ours, with or without `W/`.
 */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  if (ifNoneMatch.trim() === '*') return true;
  for (const candidate of ifNoneMatch.split(',')) {
    const tag = candidate.trim();
    if ((tag.startsWith('W/') ? tag.slice(2) : tag) === etag) return true;
  }
  return false;
}

/**
 * Sends a cached resource's representation: its own stored headers (media type, validator)
 * plus the headers that belong to this one request. The hit path and the routers both answer
 * through here, so a hit and a miss can never differ in anything but what says which they are.
 * A matching `If-None-Match` gets 304 with no body, and counts as a hit.
 */
export function sendRepresentation(
  req: IncomingMessage,
  res: ServerResponse,
  representation: Representation,
  options: CacheOutcome & { vary?: string },
): void {
  const etag = etagOf(representation);
  res.setHeader('ETag', etag);
  // Revalidate every time (the cache is ours, not the browser's), and never store it in a
  // shared cache: with sessions, an answer may depend on who asked.
  res.setHeader('Cache-Control', 'private, no-cache');
  res.setHeader('X-Cache', options.cacheStatus);
  res.setHeader('Cache-Status', `bff; ${options.cacheStatusParams}`);
  // Merged, never overwritten: CORS has already said `Vary: Origin` (contract section 4).
  if (options.vary !== undefined) vary(res, options.vary);
  if (matches(req.headers['if-none-match'], etag)) {
    res.statusCode = 304;
    res.end();
    return;
  }
  res.statusCode = 200;
  res.setHeader('Content-Type', representation.contentType);
  res.setHeader('Content-Length', representation.body.length);
  res.end(representation.body);
}

/** `Cache-Status` parameters of a fresh hit: seconds of freshness left. */
export function hitParams(freshUntil: number, now: number): string {
  return `hit; ttl=${Math.max(0, Math.floor((freshUntil - now) / 1000))}`;
}

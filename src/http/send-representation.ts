import type { IncomingMessage, ServerResponse } from 'node:http';
import vary from 'vary';
import type { Representation } from '../cache/cache-entry.js';
import type { CacheOutcome } from '../cache/cache-status.js';
import type { MadeEncoding } from '../cache/encodings.js';
import { sendEncoded } from './send-encoded.js';

/**
 * Sends a cached resource's representation: its own stored headers (media type, validator)
 * plus the headers that belong to this one request. The hit path and the routers both answer
 * through here, so a hit and a miss can never differ in anything but what says which they are.
 * A matching `If-None-Match` gets 304 with no body, and counts as a hit. The body goes out in
 * the coding the request gets (contract section 4), from the entry's stored compressed bytes
 * on a hit (send-encoded.ts); a compressed body made for this answer from a stored entry that
 * lacked it goes to `keep`, so that it is made once.
 */
export function sendRepresentation(
  req: IncomingMessage,
  res: ServerResponse,
  representation: Representation,
  options: CacheOutcome & { vary?: string; keep?: ((made: MadeEncoding) => void) | undefined },
): void {
  // Revalidate every time (the cache is ours, not the browser's), and never store it in a
  // shared cache: with sessions, an answer may depend on who asked.
  res.setHeader('Cache-Control', 'private, no-cache');
  res.setHeader('X-Cache', options.cacheStatus);
  res.setHeader('Cache-Status', `bff; ${options.cacheStatusParams}`);
  // Merged, never overwritten: CORS has already said `Vary: Origin` (contract section 4).
  if (options.vary !== undefined) vary(res, options.vary);
  const made = sendEncoded(req, res, representation);
  if (made !== undefined) options.keep?.(made);
}

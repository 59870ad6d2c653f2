import type { ServerResponse } from 'node:http';
import vary from 'vary';
import type { Representation } from '../cache/cache-entry.js';

export type CacheStatus = 'HIT' | 'MISS' | 'STALE';

/**
 * Sends a cached resource's representation: its own stored headers (media type) plus the
 * headers that belong to this one request. The hit path and the routers both answer through
 * here, so a hit and a miss can never differ in anything but what says which they are.
 */
export function sendRepresentation(
  res: ServerResponse,
  representation: Representation,
  options: { cacheStatus: CacheStatus; vary?: string },
): void {
  res.statusCode = 200;
  res.setHeader('Content-Type', representation.contentType);
  res.setHeader('Content-Length', representation.body.length);
  res.setHeader('X-Cache', options.cacheStatus);
  res.setHeader('Cache-Control', 'no-store');
  // Merged, never overwritten: CORS has already said `Vary: Origin` (contract section 4).
  if (options.vary !== undefined) vary(res, options.vary);
  res.end(representation.body);
}

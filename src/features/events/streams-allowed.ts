/**
 * Heap an open stream holds, measured: heap snapshots before and after 2,000 streams give
 * 11.9 KiB each (its socket, request and response, the head Node keeps, the request's log
 * binding), and `npm run bench:events` 12.3 KiB with 10,000 (garbage included); 18 KiB when
 * Express still held them (events-stage.ts). The share of the heap streams may take: past it,
 * 10,000 streams ended the process with a heap out of memory under the production cap, a way
 * to take an instance down by opening streams.
 */
export const HEAP_PER_STREAM = 12 * 1024;
export const STREAM_HEAP_SHARE = 0.5;

export type StreamsAllowed = { max: number; wanted: number; lowered: boolean } | { error: string };

/**
 * EVENTS_MAX_STREAMS, or a quarter of the connection cap when unset. It must leave ordinary
 * requests room below MAX_CONNECTIONS (contract section 1), and the streams must fit in half of
 * the heap: a larger value is lowered to what fits.
 */
export function streamsAllowed(options: {
  configured: number | undefined;
  maxConnections: number;
  heapLimitBytes: number;
}): StreamsAllowed {
  const { configured, maxConnections } = options;
  if (configured !== undefined && configured >= maxConnections) {
    return {
      error: `EVENTS_MAX_STREAMS (${configured}) must be below MAX_CONNECTIONS (${maxConnections}): ordinary requests need room`,
    };
  }
  const wanted = configured ?? Math.max(1, Math.floor(maxConnections / 4));
  const fits = Math.floor((options.heapLimitBytes * STREAM_HEAP_SHARE) / HEAP_PER_STREAM);
  return wanted > fits
    ? { max: fits, wanted, lowered: true }
    : { max: wanted, wanted, lowered: false };
}

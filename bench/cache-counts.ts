/*
 * A gateway's cached reads so far, from its own `GET /metrics` (the counter
 * gateway_cache_requests_total, all resources summed): read before and after a window, the
 * difference is the window's hit ratio. Scraped outside the window's CPU samples.
 */

export interface CacheCounts {
  hit: number;
  miss: number;
  stale: number;
}

const SAMPLE = /^gateway_cache_requests_total\{([^}]*)\}\s+(\S+)$/gm;

/** Undefined when the gateway exposes no such counter (METRICS=off, another build). */
export async function readCacheCounts(origin: string): Promise<CacheCounts | undefined> {
  const response = await fetch(`${origin}/metrics`).catch(() => undefined);
  if (response?.status !== 200) return undefined;
  const text = await response.text();
  // prom-client names a labelled counter (HELP, TYPE) before anything has counted.
  if (!text.includes('# TYPE gateway_cache_requests_total')) return undefined;
  const counts: CacheCounts = { hit: 0, miss: 0, stale: 0 };
  for (const [, labels, value] of text.matchAll(SAMPLE)) {
    const result = /result="(hit|miss|stale)"/.exec(labels!)?.[1] as keyof CacheCounts | undefined;
    if (result !== undefined) counts[result] += Number(value);
  }
  return counts;
}

/** Hits over all cached reads between two readings; undefined if either is missing or none. */
export function hitRatioBetween(
  before: CacheCounts | undefined,
  after: CacheCounts | undefined,
): number | undefined {
  if (before === undefined || after === undefined) return undefined;
  const hits = after.hit - before.hit;
  const reads = hits + after.miss - before.miss + after.stale - before.stale;
  return reads > 0 ? hits / reads : undefined;
}

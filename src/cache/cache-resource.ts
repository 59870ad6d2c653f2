import type { CacheResource } from '../observability/metrics.js';

/**
 * Which resource a cache key belongs to, for the metrics' `resource` label: every key starts
 * with its route's `cache.resource` (http/route-mounter.ts, cacheKey), so the key says it.
 */
export function resourceOf(key: string): CacheResource {
  const end = key.indexOf(':');
  return end === -1 ? key : key.slice(0, end);
}

import type { CacheResource } from '../observability/metrics.js';

/**
 * Which resource a cache key belongs to, for the metrics' `resource` label: every key starts
 * with its route's `cache.resource` and a colon (http/route-mounter.ts, cacheKey). Matched
 * against the known resources, so a hit allocates no string for its label.
 */
export function createResourceOf(resources: readonly string[]): (key: string) => CacheResource {
  const prefixes = resources.map((resource) => [`${resource}:`, resource] as const);
  return (key) => {
    for (const [prefix, resource] of prefixes) if (key.startsWith(prefix)) return resource;
    const end = key.indexOf(':');
    return end === -1 ? key : key.slice(0, end);
  };
}

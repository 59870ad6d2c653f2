import type { CacheResource } from '../observability/metrics.js';

/** Which resource a cache key belongs to, for the metrics' `resource` label. */
export function resourceOf(key: string): CacheResource {
  return key.startsWith('channel-folders:') ? 'channel_folders' : 'search';
}

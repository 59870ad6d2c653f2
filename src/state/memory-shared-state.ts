import type { CacheStore } from '../cache/cache-store.js';
import type { MemoryCounters } from './memory-counters.js';
import type { SharedState } from './shared-state.js';

/** Shared state of a single instance without Redis: counters and cache in this process. */
export function createMemorySharedState(options: {
  counters: MemoryCounters;
  cache: CacheStore;
  /** Whether a guard key (a session record) exists in this process. */
  exists(key: string): boolean;
}): SharedState {
  const { counters, cache } = options;
  return {
    async countAndRead(requests, read) {
      const counts = requests.map((c) =>
        c.guard !== undefined && !options.exists(c.guard) ? undefined : counters.count(c),
      );
      return { counts, entry: read === undefined ? undefined : await cache.get(read) };
    },
    uncount(requests) {
      for (const c of requests) counters.uncount(c);
      return Promise.resolve();
    },
  };
}

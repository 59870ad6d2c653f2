import { LRUCache } from 'lru-cache';
import type { CacheEntry } from './cache-entry.js';
import type { CacheStore } from './cache-store.js';

/** In-process store for a single instance without Redis; bounded by entry count. */
export function createMemoryCacheStore(options: {
  maxEntries: number;
  now?: () => number;
}): CacheStore {
  const now = options.now ?? Date.now;
  const lru = new LRUCache<string, CacheEntry>({ max: options.maxEntries });
  return {
    backend: 'memory',
    get(key) {
      const entry = lru.get(key);
      if (entry !== undefined && entry.errorUntil <= now()) {
        lru.delete(key);
        return Promise.resolve(undefined);
      }
      return Promise.resolve(entry);
    },
    set(key, entry) {
      if (entry.errorUntil > now()) lru.set(key, entry);
      return Promise.resolve();
    },
    health: () => ({ status: 'ok' }),
  };
}

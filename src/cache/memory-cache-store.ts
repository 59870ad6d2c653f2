import { LRUCache } from 'lru-cache';
import type { CacheEntry } from './cache-entry.js';
import type { CacheStore } from './cache-store.js';
import { encodedBytes } from './encodings.js';

/** What an entry costs beyond its bodies: the metadata object and the map's bookkeeping. */
const ENTRY_OVERHEAD_BYTES = 256;

/** Every body an entry holds: the identity one and its compressed forms. */
const bodyBytes = ({ body, encoded }: CacheEntry) => body.length + encodedBytes(encoded);

/**
 * In-process store for a single instance without Redis, bounded in bytes (CACHE_MAX_BYTES,
 * contract section 1, counted over every body an entry holds, compressed ones included): the
 * least recently used entries go first, and an entry larger than the whole budget is not kept
 * at all.
 */
export function createMemoryCacheStore(options: {
  maxBytes: number;
  now?: () => number;
}): CacheStore {
  const now = options.now ?? Date.now;
  const lru = new LRUCache<string, CacheEntry>({
    maxSize: options.maxBytes,
    sizeCalculation: (entry, key) => bodyBytes(entry) + key.length + ENTRY_OVERHEAD_BYTES,
  });
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
    addEncoding(key, entry, { coding, bytes }) {
      const current = lru.peek(key);
      if (
        current !== undefined &&
        current.digest === entry.digest &&
        current.storedAt === entry.storedAt &&
        current.encoded?.[coding] === undefined
      ) {
        lru.set(key, { ...current, encoded: { ...current.encoded, [coding]: bytes } });
      }
      return Promise.resolve();
    },
    health: () => ({ status: 'ok', bytes: lru.calculatedSize }),
  };
}

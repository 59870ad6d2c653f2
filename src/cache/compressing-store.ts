import type { CacheStore } from './cache-store.js';
import { withEncodings } from './encodings.js';

/**
 * A store whose entries keep their compressed bodies (COMPRESSION=on, contract section 4): each
 * entry is compressed, br and gzip, once, as it is written, which is off the answer's path (the
 * loader answers before its write settles), so every later hit, on any instance, sends stored
 * bytes. A miss that was answered compressed already made one of them; the write takes that
 * very compression (encodings.ts), so the bytes stored are the bytes sent. Reads, health and
 * whatever else a write carries pass through untouched.
 */
export function createCompressingStore(options: {
  store: CacheStore;
  /** COMPRESSION_MIN_BYTES: a smaller body is never sent compressed, so none is stored. */
  minBytes: number;
}): CacheStore {
  const { store, minBytes } = options;
  return {
    backend: store.backend,
    get: (key) => store.get(key),
    async set(key, entry, ...rest) {
      if (entry.body.length < minBytes) return store.set(key, entry, ...rest);
      // zlib does not fail on a buffer; if it ever did, the entry is still worth storing.
      const stored = await withEncodings(entry).catch(() => entry);
      return store.set(key, stored, ...rest);
    },
    health: () => store.health(),
  };
}

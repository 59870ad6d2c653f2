import { setImmediate as afterIo } from 'node:timers/promises';
import type { CacheStore } from './cache-store.js';
import { madeOf } from './encodings.js';

/**
 * A store whose entries keep the compressed bodies their answers made (COMPRESSION=on, contract
 * section 4 as docs/reliability.md, Compression, departs from it): a miss that was answered compressed made
 * that coding once, and the write stores those very bytes with the entry (`madeOf`), so the
 * bytes stored are the bytes sent. It compresses nothing itself: a coding nobody has asked for
 * yet is made by the first answer that needs it and added to the entry then (`addEncoding`),
 * so a miss that no browser asks for again costs no compression at all. The write waits until
 * the answer has been written (the loader answers before its write settles), and so sees what
 * that answer made. Reads, health and whatever else a write carries pass through untouched.
 */
export function createEncodingsStore(options: {
  store: CacheStore;
  /** COMPRESSION_MIN_BYTES: a smaller body is never sent compressed, so none was made. */
  minBytes: number;
}): CacheStore {
  const { store, minBytes } = options;
  return {
    backend: store.backend,
    get: (key) => store.get(key),
    async set(key, entry, ...rest) {
      if (entry.body.length < minBytes) return store.set(key, entry, ...rest);
      await afterIo();
      const encoded = madeOf(entry);
      return store.set(key, encoded ? { ...entry, encoded } : entry, ...rest);
    },
    addEncoding: (key, entry, made) => store.addEncoding(key, entry, made),
    health: () => store.health(),
  };
}

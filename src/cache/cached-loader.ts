import type { Logger } from 'pino';
import type { CacheWindows } from '../../config/load-config.js';
import { isAppError } from '../errors/app-error.js';
import { statusOf } from '../errors/to-problem.js';
import type { CacheEntry } from './cache-entry.js';
import type { CacheStore } from './cache-store.js';

export type CacheStatus = 'HIT' | 'MISS' | 'STALE';

/** A response body ready to send, as produced by a loader and as kept in the cache. */
export interface Representation {
  readonly body: string;
  readonly contentType: string;
}

export interface CachedRepresentation extends Representation {
  readonly cacheStatus: CacheStatus;
}

export interface CachedLoader {
  /**
   * Read-through (contract section 4): fresh entries are served without an upstream call;
   * stale ones at once while one background refresh runs; on an upstream failure an entry
   * still inside its error window is served instead of the error. Concurrent misses on a key
   * share one load.
   */
  get(
    key: string,
    windows: CacheWindows,
    load: () => Promise<Representation>,
  ): Promise<CachedRepresentation>;
  /** Resolves when every background refresh under way has settled (shutdown, tests). */
  settled(): Promise<void>;
}

export interface CachedLoaderOptions {
  store: CacheStore;
  logger: Logger;
  /** Each entry's TTL is spread by up to ± this share, so entries written together do not expire together. */
  ttlJitterRatio?: number;
  now?: () => number;
  random?: () => number;
}

/** Upstream trouble may be papered over with a stale entry; a client's own mistake may not. */
function isUpstreamFailure(error: unknown): boolean {
  return isAppError(error) && (statusOf(error.code) >= 500 || error.code === 'RATE_LIMITED');
}

export function createCachedLoader(options: CachedLoaderOptions): CachedLoader {
  const { store, logger } = options;
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const jitter = options.ttlJitterRatio ?? 0;
  // One load per key on this instance. A key leaves the map only after the store holds the
  // result, and one Redis connection answers in order, so a request whose read missed finds
  // either the running load or the stored entry, never neither.
  const inflight = new Map<string, Promise<Representation>>();

  function loadOnce(key: string, windows: CacheWindows, load: () => Promise<Representation>) {
    const running = inflight.get(key);
    if (running) return running;
    const promise = (async () => {
      try {
        const fresh = await load();
        await store.set(key, toEntry(fresh, windows, now(), 1 + jitter * (2 * random() - 1)));
        return fresh;
      } finally {
        inflight.delete(key);
      }
    })();
    inflight.set(key, promise);
    return promise;
  }

  function refreshInBackground(
    key: string,
    windows: CacheWindows,
    load: () => Promise<Representation>,
  ) {
    if (inflight.has(key)) return;
    loadOnce(key, windows, load).catch((error: unknown) => {
      logger.warn({ err: error, key }, 'background refresh failed; stale entry kept');
    });
  }

  return {
    async get(key, windows, load) {
      const entry = await store.get(key);
      const t = now();
      if (entry && t < entry.freshUntil) return fromEntry(entry, 'HIT');
      if (entry && t < entry.staleUntil) {
        refreshInBackground(key, windows, load);
        return fromEntry(entry, 'STALE');
      }
      try {
        return { ...(await loadOnce(key, windows, load)), cacheStatus: 'MISS' };
      } catch (error) {
        if (entry && t < entry.errorUntil && isUpstreamFailure(error)) {
          logger.warn({ err: error, key }, 'upstream failed; serving a stale entry');
          return fromEntry(entry, 'STALE');
        }
        throw error;
      }
    },
    async settled() {
      await Promise.allSettled([...inflight.values()]);
    },
  };
}

function toEntry(
  fresh: Representation,
  windows: CacheWindows,
  storedAt: number,
  spread: number,
): CacheEntry {
  const freshUntil = storedAt + Math.round(windows.ttlSeconds * 1000 * spread);
  const staleUntil = freshUntil + windows.staleSeconds * 1000;
  return {
    storedAt,
    freshUntil,
    staleUntil,
    errorUntil: Math.max(staleUntil, freshUntil + windows.staleIfErrorSeconds * 1000),
    contentType: fresh.contentType,
    body: fresh.body,
  };
}

function fromEntry(entry: CacheEntry, cacheStatus: CacheStatus): CachedRepresentation {
  return { body: entry.body, contentType: entry.contentType, cacheStatus };
}

import type { RedisConnection } from '../redis/redis-client.js';
import type { Logger } from 'pino';
import { createLogThrottle } from '../logging/log-throttle.js';
import { decodeEntry, encodeEntry, type CacheEntry } from './cache-entry.js';
import type { Breaker } from '../resilience/circuit-breaker.js';
import type { CacheStore } from './cache-store.js';

export interface RedisCacheStoreOptions {
  /** A client built by createRedisClient: fail-fast, no offline queue, key prefix applied. */
  redis: RedisConnection;
  /** The cache's own Redis breaker; while open, reads and writes skip Redis at once. */
  breaker: Breaker;
  logger: Logger;
  now?: () => number;
}

/**
 * Redis-backed store shared by all gateway instances. Every fault (down, slow past the
 * command timeout, corrupt value) is a miss with one warning; requests never fail on it.
 */
export function createRedisCacheStore(options: RedisCacheStoreOptions): CacheStore {
  const { redis, breaker, logger } = options;
  const now = options.now ?? Date.now;
  const throttle = createLogThrottle(logger);
  return {
    backend: 'redis',
    async get(key) {
      let raw: Buffer | null;
      try {
        raw = await breaker.run(() => redis.getBuffer(key));
      } catch (error) {
        // While the breaker is open every read would log; it logs its own state changes.
        if (breaker.state !== 'open')
          throttle.warn('cache-read', { err: error, key }, 'cache read failed; treating as a miss');
        return undefined;
      }
      if (raw === null) return undefined;
      const entry = decodeEntry(raw);
      if (entry === undefined)
        logger.warn({ key }, 'corrupt cache entry ignored; treating as a miss');
      return entry;
    },
    async set(key: string, entry: CacheEntry) {
      const ttlMs = entry.errorUntil - now();
      if (ttlMs <= 0) return;
      try {
        await breaker.run(() => redis.set(key, encodeEntry(entry), 'PX', ttlMs));
      } catch (error) {
        if (breaker.state !== 'open')
          throttle.warn('cache-write', { err: error, key }, 'cache write failed; entry dropped');
      }
    },
    health() {
      if (redis.status !== 'ready') {
        return {
          status: 'degraded',
          detail: `redis ${redis.status}; serving without the shared cache`,
        };
      }
      return breaker.state === 'open'
        ? { status: 'degraded', detail: 'redis failing; skipped until it answers again' }
        : { status: 'ok' };
    },
  };
}

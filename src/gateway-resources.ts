import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../config/load-config.js';
import { createMemoryCacheStore } from './cache/memory-cache-store.js';
import { createRedisCacheStore } from './cache/redis-cache-store.js';
import { createRedisClient } from './cache/redis-client.js';
import type { GatewayParts } from './create-gateway.js';
import { createMemorySessionStore } from './sessions/memory-session-store.js';
import { createRedisSessionStore } from './sessions/redis-session-store.js';
import { createBreaker, type Breaker } from './upstreams/http/circuit-breaker.js';
import { createUpstreamPool } from './upstreams/http/upstream-pool.js';

export interface GatewayResources {
  parts: GatewayParts;
  /** Connects Redis (when configured); rejects if it cannot. Nothing connects before. */
  connect(): Promise<void>;
  /**
   * Closes the upstream pools and Redis. Normally waits for calls under way; with `force`
   * (a stop past its deadline) destroys them.
   */
  close(options?: { force?: boolean }): Promise<void>;
}

/**
 * Everything the gateway holds open, built from configuration but not yet connected: the
 * caller (an entry point, a test, the benchmark) decides when sockets open.
 */
export function createGatewayResources(config: Config, logger: Logger): GatewayResources {
  let redis: Redis | undefined;
  let redisBreaker: Breaker | undefined;
  if (config.redis.url !== undefined) {
    redis = createRedisClient({ ...config.redis, url: config.redis.url, logger });
    // Three failures in a row and Redis is skipped for a second: a Redis that accepts
    // connections but never answers would otherwise cost every request its command timeout.
    redisBreaker = createBreaker({
      name: 'redis',
      thresholds: { failurePercent: 50, minRequests: 3, windowSeconds: 5, openSeconds: 1 },
      logger,
      isFailure: () => true,
      openError: () => new Error('redis circuit open'),
    });
  }
  const pool = (baseUrl: string, connectTimeoutMs: number, deadlineMs: number) =>
    createUpstreamPool({ origin: new URL(baseUrl).origin, connectTimeoutMs, deadlineMs });
  const searchPool = pool(
    config.search.baseUrl,
    config.search.connectTimeoutMs,
    config.search.timeoutMs,
  );
  const chatPool = pool(config.chat.baseUrl, config.chat.connectTimeoutMs, config.chat.timeoutMs);

  return {
    parts: {
      config,
      logger,
      redis,
      redisBreaker,
      store:
        redis && redisBreaker
          ? createRedisCacheStore({ redis, breaker: redisBreaker, logger })
          : createMemoryCacheStore({ maxEntries: config.cacheMaxEntries }),
      sessionStore:
        redis && redisBreaker
          ? createRedisSessionStore({ redis, breaker: redisBreaker, logger })
          : createMemorySessionStore(),
      searchPool,
      chatPool,
    },
    async connect() {
      await redis?.connect();
    },
    async close(options = {}) {
      redisBreaker?.shutdown();
      const pools = [searchPool, chatPool];
      await Promise.all(pools.map((p) => (options.force ? p.destroy() : p.close()))).catch(
        () => undefined,
      );
      if (!redis) return;
      if (options.force) redis.disconnect();
      else await redis.quit().catch(() => redis?.disconnect());
    },
  };
}

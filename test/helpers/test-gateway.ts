import type { Express } from 'express';
import type { Redis } from 'ioredis';
import { loadConfig, type Config } from '../../config/load-config.js';
import type { CachedLoader } from '../../src/cache/cached-loader.js';
import type { CacheStore } from '../../src/cache/cache-store.js';
import { createMemoryCacheStore } from '../../src/cache/memory-cache-store.js';
import { createRedisCacheStore } from '../../src/cache/redis-cache-store.js';
import { createRedisClient } from '../../src/cache/redis-client.js';
import { createGateway } from '../../src/create-gateway.js';
import type { Readiness } from '../../src/health/readiness.js';
import { createUpstreamPool } from '../../src/upstreams/http/upstream-pool.js';
import { createLogCapture, type LogCapture } from './log-capture.js';
import { TEST_REDIS_URL, createInspector, deletePrefix, uniquePrefix } from './test-redis.js';

/** Canary secrets: tests assert these never reach a response, an error or a log line. */
export const SEARCH_TOKEN = 'canary-search-token-7f3c9a1e';
export const CURSOR_SECRET = 'canary-cursor-secret-0123456789abcdef';

export interface TestGatewayOptions {
  searchOrigin: string;
  /** The chat simulator's origin; a closed port when the test does not use chat. */
  chatOrigin?: string;
  /** 'redis' = the real test Redis under a fresh prefix; a URL = that Redis (e.g. a dead port). */
  cache?: 'memory' | 'redis' | { redisUrl: string };
  env?: Record<string, string>;
}

export interface TestGateway {
  app: Express;
  config: Config;
  logs: LogCapture;
  loader: CachedLoader;
  store: CacheStore;
  readiness: Readiness;
  /** The gateway's key prefix in Redis (cache: 'redis'). */
  prefix: string;
  /** A plain client on the test Redis (cache: 'redis'). */
  inspector: Redis | undefined;
  close(): Promise<void>;
}

/** The real gateway wiring (createGateway), pointed at simulators, with captured logs. */
export async function createTestGateway(options: TestGatewayOptions): Promise<TestGateway> {
  const cache = options.cache ?? 'memory';
  const prefix = uniquePrefix();
  const redisUrl =
    cache === 'memory' ? undefined : cache === 'redis' ? TEST_REDIS_URL : cache.redisUrl;
  const config = loadConfig({
    CHAT_BASE_URL: options.chatOrigin ?? 'http://127.0.0.1:9',
    SEARCH_BASE_URL: options.searchOrigin,
    SEARCH_CLIENT_TOKEN: SEARCH_TOKEN,
    CURSOR_SECRET,
    REDIS_KEY_PREFIX: prefix,
    ...(redisUrl === undefined ? {} : { REDIS_URL: redisUrl }),
    ...options.env,
  });
  const logs = createLogCapture();
  const logger = logs.logger;

  let redis: Redis | undefined;
  let store: CacheStore;
  if (config.redis.url === undefined) {
    store = createMemoryCacheStore({ maxEntries: config.cacheMaxEntries });
  } else {
    redis = createRedisClient({ ...config.redis, url: config.redis.url, logger });
    if (cache === 'redis') await redis.connect();
    else redis.connect().catch(() => undefined);
    store = createRedisCacheStore({ redis, logger });
  }
  const inspector = cache === 'redis' ? createInspector() : undefined;
  const searchPool = createUpstreamPool({
    origin: new URL(config.search.baseUrl).origin,
    connectTimeoutMs: config.search.connectTimeoutMs,
    deadlineMs: config.search.timeoutMs,
  });
  const chatPool = createUpstreamPool({
    origin: new URL(config.chat.baseUrl).origin,
    connectTimeoutMs: config.chat.connectTimeoutMs,
    deadlineMs: config.chat.timeoutMs,
  });
  const gateway = createGateway({ config, logger, store, searchPool, chatPool });

  return {
    ...gateway,
    config,
    logs,
    store,
    prefix,
    inspector,
    async close() {
      await gateway.loader.settled();
      await Promise.all([searchPool.close(), chatPool.close()]);
      redis?.disconnect();
      if (inspector) {
        await deletePrefix(inspector, prefix);
        inspector.disconnect();
      }
    },
  };
}

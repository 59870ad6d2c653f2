import type { Express } from 'express';
import type { Redis } from 'ioredis';
import { loadConfig, type Config } from '../../config/load-config.js';
import type { CachedLoader } from '../../src/cache/cached-loader.js';
import type { CacheStore } from '../../src/cache/cache-store.js';
import { createGateway } from '../../src/create-gateway.js';
import { createGatewayResources } from '../../src/gateway-resources.js';
import type { Readiness } from '../../src/health/readiness.js';
import { createLogCapture, type LogCapture } from './log-capture.js';
import { TEST_REDIS_URL, createInspector, deletePrefix, uniquePrefix } from './test-redis.js';

/** Canary secrets: tests assert these never reach a response, an error or a log line. */
export const SEARCH_TOKEN = 'canary-search-token-7f3c9a1e';
export const CURSOR_SECRET = 'canary-cursor-secret-0123456789abcdef';
export const SESSION_SECRET = 'canary-session-secret-0123456789abcdef';

/** The frontend's origin in tests, allowed by CORS_ORIGINS. */
export const APP_ORIGIN = 'https://app.example.test';
/** What the frontend's fetch sends on unsafe requests: an allowed Origin and the CSRF header. */
export const BROWSER_HEADERS = { Origin: APP_ORIGIN, 'X-CSRF': '1' } as const;

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
    SESSION_SECRET,
    CORS_ORIGINS: APP_ORIGIN,
    REDIS_KEY_PREFIX: prefix,
    ...(redisUrl === undefined ? {} : { REDIS_URL: redisUrl }),
    ...options.env,
  });
  const logs = createLogCapture();
  const resources = createGatewayResources(config, logs.logger);
  // A Redis the test means to use must be up; a deliberately dead one must not block the start.
  if (cache === 'redis') await resources.connect();
  else resources.connect().catch(() => undefined);
  const inspector = cache === 'redis' ? createInspector() : undefined;
  const gateway = createGateway(resources.parts);

  return {
    ...gateway,
    config,
    logs,
    store: resources.parts.store,
    prefix,
    inspector,
    async close() {
      await gateway.loader.settled();
      gateway.shutdown();
      await resources.close();
      if (inspector) {
        await deletePrefix(inspector, prefix);
        inspector.disconnect();
      }
    },
  };
}

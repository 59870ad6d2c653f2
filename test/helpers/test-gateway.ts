import type { RequestListener } from 'node:http';
import type { Redis } from 'ioredis';
import { loadConfig, type Config } from '../../config/load-config.js';
import type { CachedLoader } from '../../src/cache/cached-loader.js';
import type { CacheStore } from '../../src/cache/cache-store.js';
import { createGateway, type Gateway } from '../../src/composition/gateway.js';
import { ROUTE_TABLE } from '../../src/features/route-table.js';
import type { Readiness } from '../../src/health/readiness.js';
import { createOpenApiDocument, openApiOptions } from '../../src/openapi/openapi-document.js';
import { createResponseChecker, type Drift } from './openapi-responses.js';
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
  /**
   * The gateway's clock (sessions, cache windows, in-process rate limits), for tests that move
   * time instead of waiting it out (test-clock.ts).
   */
  now?: () => number;
}

export interface TestGateway {
  /** The gateway's request listener, for supertest in-process. */
  app: RequestListener;
  /** The gateway itself, started: `gateway.url` is its real listener. */
  gateway: Gateway;
  config: Config;
  logs: LogCapture;
  loader: CachedLoader;
  store: CacheStore;
  readiness: Readiness;
  /** The gateway's key prefix in Redis (cache: 'redis'). */
  prefix: string;
  /** A plain client on the test Redis (cache: 'redis'). */
  inspector: Redis | undefined;
  /** The OpenAPI check of every in-process response: how many matched a route, what drifted. */
  openapi: { readonly checked: number; readonly drift: readonly Drift[] };
  close(): Promise<void>;
}

/**
 * The gateway's OpenAPI document for a configuration, generated once per set of options and
 * worker: generating it from the schemas for each of the suite's test gateways cost more CPU
 * than most of their tests.
 */
const documents = new Map<string, Record<string, unknown>>();

function documentFor(config: Config): Record<string, unknown> {
  const options = openApiOptions(config);
  const key = JSON.stringify(options);
  let document = documents.get(key);
  if (!document) {
    document = createOpenApiDocument(options);
    documents.set(key, document);
  }
  return document;
}

/**
 * The real gateway (createGateway), started on a loopback port with its own lifecycle and
 * pointed at simulators, with captured logs. close() is the gateway's own stop.
 */
export async function createTestGateway(options: TestGatewayOptions): Promise<TestGateway> {
  const cache = options.cache ?? 'memory';
  const prefix = uniquePrefix();
  const redisUrl =
    cache === 'memory' ? undefined : cache === 'redis' ? TEST_REDIS_URL : cache.redisUrl;
  const config = loadConfig(
    {
      HOST: '127.0.0.1',
      PORT: '0',
      SHUTDOWN_DRAIN_DELAY_MS: '0',
      CHAT_BASE_URL: options.chatOrigin ?? 'http://127.0.0.1:9',
      SEARCH_BASE_URL: options.searchOrigin,
      SEARCH_CLIENT_TOKEN: SEARCH_TOKEN,
      CURSOR_SECRET,
      SESSION_SECRET,
      CORS_ORIGINS: APP_ORIGIN,
      REDIS_KEY_PREFIX: prefix,
      // Four test files share two cores (more with a CPU hog): a 100 ms command timeout would
      // turn a scheduling pause into a cache miss. Tests about a slow Redis set their own.
      REDIS_COMMAND_TIMEOUT_MS: '1000',
      // The chat event queue is on by default with a service account; tests that want it say so
      // (test/integration/chat-events.test.ts), so the others see only their own chat calls.
      CHAT_EVENTS: 'off',
      ...(redisUrl === undefined ? {} : { REDIS_URL: redisUrl }),
      ...options.env,
    },
    ROUTE_TABLE,
  );
  const logs = createLogCapture('debug', config.secrets);
  const gateway = createGateway({
    config,
    logger: logs.logger,
    ...(options.now ? { now: options.now } : {}),
  });
  await gateway.start();
  // Every response a test receives in-process is checked against the gateway's OpenAPI document.
  const responses = createResponseChecker(documentFor(config));
  const inspector = cache === 'redis' ? createInspector() : undefined;

  return {
    app: responses.wrap(gateway.handler),
    gateway,
    config,
    logs,
    loader: gateway.loader,
    store: gateway.cache,
    readiness: gateway.readiness,
    prefix,
    inspector,
    openapi: responses,
    async close() {
      await gateway.stop();
      if (inspector) {
        await deletePrefix(inspector, prefix);
        inspector.disconnect();
      }
      if (responses.drift.length > 0) {
        const lines = responses.drift.map((d) => `${d.request} -> ${d.status}: ${d.problem}`);
        throw new Error(`Responses the OpenAPI document does not describe:\n${lines.join('\n')}`);
      }
    },
  };
}

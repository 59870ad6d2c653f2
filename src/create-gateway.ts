import { randomBytes } from 'node:crypto';
import type { Express } from 'express';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import type { Config } from '../config/load-config.js';
import { createApp } from './app.js';
import { createCachedLoader, type CachedLoader } from './cache/cached-loader.js';
import type { CacheStore } from './cache/cache-store.js';
import { createChatFeature } from './features/chat/chat-feature.js';
import { createSearchFeature, SEARCH_ROUTE } from './features/search/search-feature.js';
import { createReadiness, type Readiness } from './health/readiness.js';
import { createCsrfGuard } from './http/csrf-guard.js';
import { createRateLimits } from './http/rate-limits.js';
import { createSessionCookie } from './http/session-cookie.js';
import { createUpstreamBreaker, type Breaker } from './upstreams/http/circuit-breaker.js';
import { secretOrEphemeral } from './security/secret-or-ephemeral.js';
import { createSessionSealer } from './sessions/session-crypto.js';
import { createSessionManager } from './sessions/session-manager.js';
import type { SessionStore } from './sessions/session-store.js';

/** What the composition root has built and opened; everything below is pure wiring. */
export interface GatewayParts {
  config: Config;
  logger: Logger;
  store: CacheStore;
  sessionStore: SessionStore;
  /** The shared Redis, for rate-limit counters; absent without REDIS_URL. */
  redis: Redis | undefined;
  /** Open while Redis keeps failing: every Redis user skips it at once instead of timing out. */
  redisBreaker: Breaker | undefined;
  searchPool: Dispatcher;
  chatPool: Dispatcher;
}

export interface Gateway {
  app: Express;
  loader: CachedLoader;
  readiness: Readiness;
  /** Stops the breakers' timers. */
  shutdown(): void;
}

/** Wires clients, cache, sessions, services and routers into an app; opens nothing. */
export function createGateway(parts: GatewayParts): Gateway {
  const { config, logger, store } = parts;
  const loader = createCachedLoader({ store, logger, ttlJitterRatio: config.cacheTtlJitterRatio });
  const breakers = {
    search: createUpstreamBreaker({ source: 'search', thresholds: config.breaker, logger }),
    chat: createUpstreamBreaker({ source: 'chat', thresholds: config.breaker, logger }),
  };
  // An open circuit degrades the gateway (stale answers, fast 503s); it never makes it unready.
  const circuit = (breaker: Breaker) => () =>
    breaker.state === 'closed'
      ? { status: 'ok' as const, circuit: breaker.state }
      : {
          status: 'degraded' as const,
          circuit: breaker.state,
          detail: `retry in ${breaker.retryAfterSeconds()} s`,
        };
  const readiness = createReadiness([
    { name: 'cache', check: () => ({ backend: store.backend, ...store.health() }) },
    { name: 'search', check: circuit(breakers.search) },
    { name: 'chat', check: circuit(breakers.chat) },
  ]);

  const cookie = createSessionCookie({
    secure: config.session.cookieSecure,
    sameSite: config.session.sameSite,
    maxAgeSeconds: config.session.absoluteTimeoutSeconds,
  });
  const sessions = createSessionManager({
    store: parts.sessionStore,
    // Service mode never opens a session: no key to configure, nothing to warn about.
    sealer: createSessionSealer(
      config.chat.authMode === 'session'
        ? secretOrEphemeral(config.session.secret, 'SESSION_SECRET', logger)
        : randomBytes(32),
    ),
    idleTimeoutSeconds: config.session.idleTimeoutSeconds,
    absoluteTimeoutSeconds: config.session.absoluteTimeoutSeconds,
  });
  const rateLimits = createRateLimits({
    limits: config.rateLimit,
    redis: parts.redis,
    redisUsable: () => parts.redisBreaker?.state !== 'open',
    sessionOf: (req) => cookie.read(req),
  });

  const app = createApp({
    logger,
    readiness,
    corsOrigins: config.corsOrigins,
    trustProxy: config.trustProxy,
    bodyLimitBytes: config.bodyLimitBytes,
    guards: [createCsrfGuard({ allowedOrigins: config.corsOrigins }), rateLimits.general],
    routers: {
      ...createChatFeature({
        config,
        pool: parts.chatPool,
        breaker: breakers.chat,
        loader,
        sessions,
        cookie,
        loginLimit: rateLimits.login,
      }),
      [SEARCH_ROUTE]: createSearchFeature({
        config,
        logger,
        pool: parts.searchPool,
        breaker: breakers.search,
        loader,
      }),
    },
  });
  return {
    app,
    loader,
    readiness,
    shutdown() {
      breakers.search.shutdown();
      breakers.chat.shutdown();
    },
  };
}

import type { RedisConnection } from './redis/redis-client.js';
import { randomBytes } from 'node:crypto';
import { getHeapStatistics } from 'node:v8';
import type { RequestListener } from 'node:http';
import type { Logger } from 'pino';
import { ConfigError, type Config } from '../config/load-config.js';
import { createApp, createOpsApp } from './app.js';
import {
  EVENTS_ROUTE,
  createEventsFeature,
  type EventsFeature,
} from './features/events/events-feature.js';
import { HEAP_PER_STREAM, streamsAllowed } from './features/events/streams-allowed.js';
import { createCachedLoader, type CachedLoader } from './cache/cached-loader.js';
import type { CacheStore } from './cache/cache-store.js';
import { createCompressingStore } from './cache/compressing-store.js';
import { AUTH_ROUTE, createAuthFeature } from './features/auth/auth-feature.js';
import { BOOTSTRAP_ROUTE, createBootstrapFeature } from './features/bootstrap/bootstrap-feature.js';
import {
  createServiceCredentials,
  createSessionCredentials,
} from './features/chat/chat-credentials.js';
import { createChatEvents, type ChatEvents } from './features/chat/chat-events.js';
import { CHAT_ROUTE, createChatFeature } from './features/chat/chat-feature.js';
import { createSearchFeature, SEARCH_ROUTE } from './features/search/search-feature.js';
import { createReadiness, type Readiness } from './health/readiness.js';
import { createMetrics } from './observability/metrics.js';
import { resourceOf } from './cache/cache-resource.js';
import { createGatewayStores } from './gateway-stores.js';
import { compileTrust } from './http/client-address.js';
import { createCompressionStage, type CompressionPolicy } from './http/compression.js';
import { createCsrfGuard } from './http/csrf-guard.js';
import { createDocsRouter } from './http/docs-router.js';
import { createOpsRouter } from './http/ops-router.js';
import { createOpenApiDocument, openApiOptions } from './openapi/openapi-document.js';
import { chain, createEdge } from './http/edge.js';
import { createHitPath } from './http/hit-path.js';
import { createAttemptLimit, createRateLimitGuard, createRateLimits } from './http/rate-limits.js';
import { createSessionCookie } from './http/session-cookie.js';
import { createStaticSite } from './http/static-site.js';
import type { Lifecycle } from './lifecycle/lifecycle.js';
import type { Breaker } from './resilience/circuit-breaker.js';
import { createSecretScrubber } from './security/scrub-secrets.js';
import { secretOrEphemeral } from './security/secret-or-ephemeral.js';
import { createSessionSealer } from './sessions/session-crypto.js';
import { createSessionManager } from './sessions/session-manager.js';
import { createChatClient } from './upstreams/chat/chat-client.js';
import { createUpstream } from './upstreams/http/upstream.js';
import { createSearchStatus } from './upstreams/search/search-status.js';

/** Everything the gateway is made of, built from configuration, not yet connected. */
export interface GatewayParts {
  /** Edge, hit path, then the app: what the public listener serves. */
  handler: RequestListener;
  /** What OPS_PORT's listener serves (health, readiness, metrics), when it is set. */
  opsHandler: RequestListener | undefined;
  readiness: Readiness;
  loader: CachedLoader;
  cache: CacheStore;
  /** Redis, when configured (its connection starts and closes with the lifecycle). */
  redis: RedisConnection | undefined;
  /** The chat server's event queue keeping folders fresh (CHAT_EVENTS), when on. */
  chatEvents: ChatEvents | undefined;
  /** GET /api/events: open streams and the fleet's change bus. */
  events: EventsFeature;
}

/** The search service's status is probed at most this often (contract section 2.1: within 5 s). */
const SEARCH_STATUS_INTERVAL_MS = 5000;
/** A chat-events lease its holder stops renewing is taken over within this (contract: 15 s). */
const CHAT_EVENTS_LEASE_MS = 8000;
/** Connections kept to each upstream at most. */
const UPSTREAM_CONNECTIONS = 64;

/**
 * Wires the gateway from configuration: stores, shared state, upstreams, features, the app and
 * the stages in front of it. Opens nothing: each part that holds connections registers its
 * start and close with `lifecycle` where it is made, and gateway.ts runs them.
 */
export function createGatewayParts(
  config: Config,
  logger: Logger,
  now: () => number,
  server: { maxConnections: number },
  lifecycle: Lifecycle,
): GatewayParts {
  const stores = createGatewayStores(config, logger, now, lifecycle);
  const { cache, state } = stores;
  const metrics = createMetrics({ enabled: config.metrics.enabled });
  // COMPRESSION (contract section 4): stored entries keep br and gzip bodies, and every answer
  // learns the policy from a stage in front of the hit path and the app.
  const compression: CompressionPolicy | undefined = config.compression.enabled
    ? { minBytes: config.compression.minBytes }
    : undefined;
  const compressionStages = compression ? [createCompressionStage(compression)] : [];
  const loader = createCachedLoader({
    store: compression ? createCompressingStore({ store: cache, ...compression }) : cache,
    logger,
    ttlJitterRatio: config.cacheTtlJitterRatio,
    now,
    onRead: (key, result) => metrics.countCache(resourceOf(key), result),
    onStored: (key) => events.stored(key),
    flights: stores.flights,
    // Half of the request's upstream deadline: its own call still fits in the other half.
    flightWaitMs: (key) =>
      (resourceOf(key) === 'search' ? config.search.timeoutMs : config.chat.timeoutMs) / 2,
  });

  const upstream = (
    source: 'search' | 'chat',
    section: Config['search'] | Config['chat'],
    breakerName: string = source,
  ) => {
    const made = createUpstream({
      source,
      breakerName,
      baseUrl: section.baseUrl,
      connectTimeoutMs: section.connectTimeoutMs,
      maxDeadlineMs: Math.max(
        section.timeoutMs,
        'redirectTimeoutMs' in section ? section.redirectTimeoutMs : section.writeTimeoutMs,
      ),
      breaker: config.breaker,
      logger,
      maxResponseBytes: config.upstreamLimits.maxResponseBytes,
      connections: UPSTREAM_CONNECTIONS,
      metrics,
    });
    // Forced: calls still running are destroyed rather than awaited.
    lifecycle.onClose(`${breakerName} upstream`, ({ force }) => made.close({ force }));
    return made;
  };
  const searchUpstream = upstream('search', config.search);
  // The click-tracking redirect has a breaker of its own (contract section 6): its query is the
  // caller's choice, so its failures must never pause searches, nor an open search circuit clicks.
  const redirectUpstream = upstream('search', config.search, 'search-redirect');
  const chatUpstream = upstream('chat', config.chat);

  const cookie = createSessionCookie({
    secure: config.session.cookieSecure,
    sameSite: config.session.sameSite,
    maxAgeSeconds: config.session.absoluteTimeoutSeconds,
  });
  const sessionMode = config.chat.authMode === 'session';
  const sessions = createSessionManager({
    store: stores.sessions,
    // Service mode never opens a session: no key to configure, nothing to warn about.
    sealer: createSessionSealer(
      sessionMode
        ? secretOrEphemeral(config.session.secret, 'SESSION_SECRET', logger)
        : randomBytes(32),
    ),
    idleTimeoutSeconds: config.session.idleTimeoutSeconds,
    absoluteTimeoutSeconds: config.session.absoluteTimeoutSeconds,
    now,
  });
  const trust = compileTrust(config.trustProxy);
  const limits = createRateLimits({
    limits: config.rateLimit,
    trust,
    sessions,
    sessionOf: (req) => cookie.read(req),
  });

  const chatClient = createChatClient({
    upstream: chatUpstream,
    deadlineMs: config.chat.timeoutMs,
    writeDeadlineMs: config.chat.writeTimeoutMs,
    retryAfterMaxSeconds: config.retryAfterMaxSeconds,
    maxJsonDepth: config.upstreamLimits.maxJsonDepth,
    // Every credential the schema marks (config.secrets), never a hand-kept list.
    scrub: createSecretScrubber(config.secrets),
  });
  const search = createSearchFeature({
    config,
    logger,
    upstream: searchUpstream,
    redirectUpstream,
    loader,
  });
  const serviceAccount =
    sessionMode || config.chat.email === undefined || config.chat.apiKey === undefined
      ? undefined
      : { email: config.chat.email, apiKey: config.chat.apiKey };
  const credentials = serviceAccount
    ? createServiceCredentials(serviceAccount)
    : createSessionCredentials({ sessions, cookie });
  const chat = createChatFeature({ config, client: chatClient, loader, credentials });
  // One event queue per deployment keeps the folders fresh (CHAT_EVENTS), with the service
  // account whatever the auth mode; the lease decides which instance holds it.
  const chatEvents =
    config.chat.events && config.chat.email !== undefined && config.chat.apiKey !== undefined
      ? createChatEvents({
          client: chatClient,
          credentials: { email: config.chat.email, apiKey: config.chat.apiKey },
          folders: chat.service.folderCache,
          lease: stores.lease('chat-events:lease', CHAT_EVENTS_LEASE_MS),
          logger,
        })
      : undefined;
  const bootstrap = createBootstrapFeature({
    chat: chat.service,
    credentials,
    serviceAccount,
    sessions,
    cookie,
    deadlineMs: config.bootstrapTimeoutMs,
    searchStatus: createSearchStatus({
      upstream: searchUpstream,
      clientToken: config.search.clientToken,
      deadlineMs: config.search.timeoutMs,
      intervalMs: SEARCH_STATUS_INTERVAL_MS,
    }),
  });
  const events = createEventsFeature({
    chat: chat.service,
    cache,
    credentials,
    sessions: sessionMode ? sessions : undefined,
    cookie: sessionMode ? cookie : undefined,
    redis: stores.redis,
    keyPrefix: config.redis.keyPrefix,
    policies: limits.general,
    state,
    maxStreams: eventsMaxStreams(config.events.maxStreams, server.maxConnections, logger),
    heartbeatSeconds: config.events.heartbeatSeconds,
    // Readiness is built below; a stream opened before it exists is not draining.
    isDraining: () => readiness.draining,
    logger,
  });
  lifecycle.onStart('event bus', () => events.start());
  metrics.watchEventStreams(() => events.hub.status());
  const routers = {
    [SEARCH_ROUTE]: search.router,
    [EVENTS_ROUTE]: events.router,
    [CHAT_ROUTE]: chat.router,
    [BOOTSTRAP_ROUTE]: bootstrap,
    // In service mode there is no login: every chat call uses the service account.
    ...(sessionMode
      ? {
          [AUTH_ROUTE]: createAuthFeature({
            chat: chatClient,
            sessions,
            cookie,
            loginLimit: createAttemptLimit(limits.login, state),
          }),
        }
      : {}),
  };

  const readiness = createReadiness([
    { name: 'cache', check: () => ({ backend: cache.backend, ...cache.health() }) },
    { name: 'search', check: circuitCheck(searchUpstream.breaker) },
    { name: 'search-redirect', check: circuitCheck(redirectUpstream.breaker) },
    { name: 'chat', check: circuitCheck(chatUpstream.breaker) },
    ...(chatEvents
      ? [
          {
            name: 'chat-events',
            // Shown, never failing: without the queue, folders live by their TTL.
            check: () => {
              const { state, lagSeconds } = chatEvents.status();
              return {
                status: state === 'backoff' ? ('degraded' as const) : ('ok' as const),
                state,
                ...(lagSeconds === undefined ? {} : { lagSeconds: Math.round(lagSeconds) }),
              };
            },
          },
        ]
      : []),
  ]);
  // Health, readiness and metrics: on the public listener, or on OPS_PORT's alone.
  const ops = createOpsRouter({ readiness, metrics, metricsToken: config.metrics.token });
  if (chatEvents) metrics.watchChatEvents(() => chatEvents.status());
  metrics.watchBreakers({
    search: searchUpstream.breaker,
    'search-redirect': redirectUpstream.breaker,
    chat: chatUpstream.breaker,
    ...stores.breakers,
  });
  const separateOps = config.opsPort !== undefined;
  const app: RequestListener = createApp({
    ...(separateOps ? {} : { ops }),
    docs: createDocsRouter(() => createOpenApiDocument(openApiOptions(config))),
    trust,
    bodyLimitBytes: config.bodyLimitBytes,
    site:
      config.staticSite.dir === undefined
        ? []
        : createStaticSite({
            dir: config.staticSite.dir,
            imgSrc: config.staticSite.imgSrc,
            ...(compression ? { compression } : {}),
          }),
    guards: [
      createCsrfGuard({ allowedOrigins: config.corsOrigins }),
      createRateLimitGuard(limits.general, state),
    ],
    routers,
  });
  const edge = createEdge({
    logger,
    corsOrigins: config.corsOrigins,
    isDraining: () => readiness.draining,
    metrics,
    site: config.staticSite.dir !== undefined,
  });
  const hits = createHitPath({
    routes: [search.cachedRoute, ...chat.cachedRoutes],
    state,
    policies: limits.general,
    onHit: (key) => metrics.countCache(resourceOf(key), 'hit'),
    flights: stores.flights,
    now,
  });

  const opsEdge = createEdge({
    logger,
    corsOrigins: [],
    isDraining: () => readiness.draining,
    metrics,
    site: false,
  });
  return {
    handler: chain([edge, events.stage, ...compressionStages, hits], app),
    opsHandler: separateOps ? chain([opsEdge, ...compressionStages], createOpsApp(ops)) : undefined,
    readiness,
    loader,
    cache,
    redis: stores.redis,
    chatEvents,
    events,
  };
}

/** EVENTS_MAX_STREAMS as it may be (streams-allowed.ts); a lowered value is said once. */
function eventsMaxStreams(
  configured: number | undefined,
  maxConnections: number,
  logger: Logger,
): number {
  const allowed = streamsAllowed({
    configured,
    maxConnections,
    heapLimitBytes: getHeapStatistics().heap_size_limit,
  });
  if ('error' in allowed) throw new ConfigError([allowed.error]);
  if (allowed.lowered) {
    logger.warn(
      { wanted: allowed.wanted, heapFits: allowed.max },
      `event streams capped at ${allowed.max}: more would not fit in half of the heap (about ${Math.round(HEAP_PER_STREAM / 1024)} KiB each; raise --max-old-space-size to hold more)`,
    );
  }
  return allowed.max;
}

/** An open circuit degrades the gateway (stale answers, fast 503s); it never makes it unready. */
function circuitCheck(breaker: Breaker) {
  return () =>
    breaker.state === 'closed'
      ? { status: 'ok' as const, circuit: breaker.state }
      : {
          status: 'degraded' as const,
          circuit: breaker.state,
          detail: `retry in ${breaker.retryAfterSeconds()} s`,
        };
}

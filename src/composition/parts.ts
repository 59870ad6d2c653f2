import type { RequestListener } from 'node:http';
import type { Logger } from 'pino';
import type { Config } from '../../config/load-config.js';
import { createApp, createOpsApp } from './app.js';
import { createResourceOf } from '../cache/cache-resource.js';
import { createCachedLoader, type CachedLoader } from '../cache/cached-loader.js';
import type { CacheStore } from '../cache/cache-store.js';
import { createEncodingsStore } from '../cache/encodings-store.js';
import type { ChatEvents } from '../features/chat/chat-events.js';
import type { EventsFeature } from '../features/events/events-feature.js';
import { ROUTE_TABLE } from '../features/route-table.js';
import { createGatewayAccess, type GatewayAccess } from './access.js';
import { createGatewayFeatures, type GatewayFeatures } from './features.js';
import { createGatewayStores, type GatewayStores } from './stores.js';
import { createGatewayUpstreams, type GatewayUpstreams } from './upstreams.js';
import { createReadiness, type Readiness } from '../health/readiness.js';
import { createCompressionStage, type CompressionPolicy } from '../http/compression.js';
import { createCsrfGuard } from '../http/csrf-guard.js';
import { createDocsRouter } from '../http/docs-router.js';
import { chain, createEdge } from '../http/edge.js';
import { createHitPath } from '../http/hit-path.js';
import { createOpsRouter } from '../http/ops-router.js';
import { createRateLimitGuard } from '../http/rate-limits.js';
import { createStaticSite } from '../http/static-site.js';
import type { Lifecycle } from '../lifecycle/lifecycle.js';
import { createMetrics, type Metrics } from '../observability/metrics.js';
import { createRouteTemplates } from '../observability/route-templates.js';
import { createOpenApiDocument, openApiOptions } from '../openapi/openapi-document.js';
import { readPackageFacts } from '../openapi/package-facts.js';
import type { Breaker } from '../resilience/circuit-breaker.js';
import type { Wiring } from './wiring.js';

/** Each cache resource of the route table, and the upstream its misses call. */
const UPSTREAM_OF: ReadonlyMap<string, 'chat' | 'search'> = new Map(
  ROUTE_TABLE.flatMap((route) =>
    route.cache ? [[route.cache.resource, route.cache.upstream]] : [],
  ),
);
const RESOURCES = [...UPSTREAM_OF.keys()];
const resourceOf = createResourceOf(RESOURCES);

/** Everything the gateway is made of, built from configuration, not yet connected. */
export interface GatewayParts {
  /** Edge, hit path, then the app: what the public listener serves. */
  handler: RequestListener;
  /** What OPS_PORT's listener serves (health, readiness, metrics), when it is set. */
  opsHandler: RequestListener | undefined;
  readiness: Readiness;
  loader: CachedLoader;
  cache: CacheStore;
  /** The paths whose fresh hits are answered before Express: every cached route mounted. */
  hitPaths: readonly string[];
  answeredInFront: readonly string[];
  /**
   * The chat server's event queue keeping folders fresh (CHAT_EVENTS), when on: it starts once
   * the gateway listens.
   */
  chatEvents: ChatEvents | undefined;
}

/**
 * Wires the gateway from configuration, in named parts: stores (stores.ts), upstreams
 * (upstreams.ts), who is calling (access.ts), the features (features.ts), readiness, and the
 * request pipeline in front of them. Opens nothing: each part that holds connections, or has
 * work to finish in a stop, registers its phases with `lifecycle` where it is made, and
 * gateway.ts runs them.
 */
export function createGatewayParts(options: Wiring & { maxConnections: number }): GatewayParts {
  const { config, logger, now, lifecycle } = options;
  const stores = createGatewayStores({ config, logger, now, lifecycle });
  const metrics = createMetrics({ enabled: config.metrics.enabled, cacheResources: RESOURCES });
  // COMPRESSION (contract section 4): stored entries keep the br and gzip bodies their answers
  // made, and every answer learns the policy from a stage in front of the hit path and the app.
  const compression: CompressionPolicy | undefined = config.compression.enabled
    ? { minBytes: config.compression.minBytes }
    : undefined;
  const loader = createCachedLoader({
    store: compression
      ? createEncodingsStore({ store: stores.cache, ...compression })
      : stores.cache,
    logger,
    ttlJitterRatio: config.cacheTtlJitterRatio,
    now,
    onRead: (key, result) => metrics.countCache(resourceOf(key), result),
    onStored: (key) => features.events.stored(key),
    flights: stores.flights,
    // Half of the request's upstream deadline: its own call still fits in the other half.
    flightWaitMs: (key) =>
      (UPSTREAM_OF.get(resourceOf(key)) === 'search'
        ? config.search.timeoutMs
        : config.chat.timeoutMs) / 2,
  });
  // Background refreshes and cache writes settle once the listener has closed: no request is
  // left to start another.
  lifecycle.onDrain('cache loader', () => loader.settled());
  const upstreams = createGatewayUpstreams({ config, logger, metrics, lifecycle });
  const access = createGatewayAccess({ config, logger, now, store: stores.sessions });
  const features = createGatewayFeatures({
    config,
    logger,
    stores,
    loader,
    upstreams,
    access,
    maxConnections: options.maxConnections,
    // Readiness is built below; a stream opened before it exists is not draining.
    isDraining: () => readiness.draining,
  });
  const { events, chatEvents } = features;
  const readiness = createGatewayReadiness({ cache: stores.cache, upstreams, chatEvents });
  // A stop begins with /readyz turning 503, at once, so that load balancers send no more.
  lifecycle.onPreClose('readiness', () => readiness.startDraining());
  registerEvents({ lifecycle, events, chatEvents });
  watch({ metrics, upstreams, events, chatEvents, storeBreakers: stores.breakers });
  metrics.watchIsolation(() => ({ ...stores.isolation(), sessionsEnded: access.sessions.ended }));

  const pipeline = createRequestPipeline({
    config,
    logger,
    now,
    stores,
    access,
    features,
    readiness,
    metrics,
    compression,
    loader,
  });
  return {
    ...pipeline,
    hitPaths: features.cachedRoutes.map((route) => route.path),
    answeredInFront: features.cachedRoutes
      .filter((route) => route.answer !== undefined)
      .map((route) => route.path),
    readiness,
    loader,
    cache: stores.cache,
    chatEvents,
  };
}

/**
 * The request pipeline: the edge (request id, log line, security headers, CORS), the event
 * streams' stage, compression, the hit path, then the app (guards, routers, 404, errors); and
 * the operations listener's own, when OPS_PORT is set.
 */
function createRequestPipeline(parts: {
  config: Config;
  logger: Logger;
  now: () => number;
  stores: GatewayStores;
  access: GatewayAccess;
  features: GatewayFeatures;
  readiness: Readiness;
  metrics: Metrics;
  compression: CompressionPolicy | undefined;
  loader: CachedLoader;
}): Pick<GatewayParts, 'handler' | 'opsHandler'> {
  const { config, logger, stores, access, features, readiness, metrics, compression } = parts;
  // Health, readiness and metrics: on the public listener, or on OPS_PORT's alone.
  const ops = createOpsRouter({ readiness, metrics, metricsToken: config.metrics.token });
  const separateOps = config.opsPort !== undefined;
  const compressionStages = compression ? [createCompressionStage(compression)] : [];
  // The document's version and license, read at start-up: a missing package.json fails here.
  const about = readPackageFacts();
  const app: RequestListener = createApp({
    ...(separateOps ? {} : { ops }),
    docs: createDocsRouter(() =>
      createOpenApiDocument({ ...openApiOptions(config), package: about }),
    ),
    trust: access.trust,
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
      createRateLimitGuard(access.limits.general, stores.generalLimit),
    ],
    routers: features.routers,
  });
  const templates = ROUTE_TABLE.map((route) => route.path);
  const edge = (corsOrigins: readonly string[], site: boolean) =>
    createEdge({
      logger,
      corsOrigins,
      isDraining: () => readiness.draining,
      metrics,
      routeOf: createRouteTemplates(templates, site),
    });
  const hits = createHitPath({
    routes: features.cachedRoutes,
    state: stores.generalLimit,
    policies: access.limits.general,
    onHit: (key) => metrics.countCache(resourceOf(key), 'hit'),
    keepEncoding: (key, entry, made) => parts.loader.keepEncoding(key, entry, made),
    flights: stores.flights,
    now: parts.now,
  });
  const site = config.staticSite.dir !== undefined;
  return {
    handler: chain(
      [edge(config.corsOrigins, site), features.events.stage, ...compressionStages, hits],
      app,
    ),
    opsHandler: separateOps
      ? chain([edge([], false), ...compressionStages], createOpsApp(ops))
      : undefined,
  };
}

/**
 * The event streams' and the chat event queue's starts and stops. Streams never end on their
 * own: a stop ends them spread over the drain delay, none after it, so the pages of this
 * instance reconnect to the others over that window, not in one instant, and none delays the
 * drain (contract section 2.2). The chat event queue's stop begins at once too (another
 * instance may take the lease over sooner) and is waited for while the chat pool and Redis are
 * still up: its queue is deleted and its lease released. It does not hold the listener open.
 */
function registerEvents(options: {
  lifecycle: Lifecycle;
  events: EventsFeature;
  chatEvents: ChatEvents | undefined;
}): void {
  const { lifecycle, events, chatEvents } = options;
  lifecycle.onStart('event bus', () => events.start());
  lifecycle.onPreClose('event streams', ({ drainDelayMs }) => events.stop(drainDelayMs));
  if (chatEvents === undefined) return;
  let stopped: Promise<void> | undefined;
  lifecycle.onPreClose('chat events', () => {
    stopped = chatEvents.stop();
    // A forced stop does not wait for it below: its failure must not go unhandled then.
    stopped.catch(() => undefined);
  });
  lifecycle.onClose('chat events', ({ force }) => (force ? undefined : stopped));
}

/** The cache and each circuit, and the chat event queue when it runs: shown, never failing. */
function createGatewayReadiness(options: {
  cache: CacheStore;
  upstreams: GatewayUpstreams;
  chatEvents: ChatEvents | undefined;
}): Readiness {
  const { cache, upstreams, chatEvents } = options;
  return createReadiness([
    { name: 'cache', check: () => ({ backend: cache.backend, ...cache.health() }) },
    { name: 'search', check: circuitCheck(upstreams.search.breaker) },
    { name: 'search-redirect', check: circuitCheck(upstreams.redirect.breaker) },
    { name: 'chat', check: circuitCheck(upstreams.chat.breaker) },
    ...(chatEvents
      ? [
          {
            name: 'chat-events',
            // Without the queue, folders live by their TTL.
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
}

/** What the metrics read when scraped: the streams, the chat queue and every breaker. */
function watch(parts: {
  metrics: Metrics;
  upstreams: GatewayUpstreams;
  events: EventsFeature;
  chatEvents: ChatEvents | undefined;
  storeBreakers: Record<string, Breaker>;
}): void {
  const { metrics, upstreams, events, chatEvents } = parts;
  metrics.watchEventStreams(() => events.hub.status());
  if (chatEvents) metrics.watchChatEvents(() => chatEvents.status());
  metrics.watchBreakers({
    search: upstreams.search.breaker,
    'search-redirect': upstreams.redirect.breaker,
    chat: upstreams.chat.breaker,
    ...parts.storeBreakers,
  });
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

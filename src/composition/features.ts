import { getHeapStatistics } from 'node:v8';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import { ConfigError, type Config } from '../../config/load-config.js';
import type { CachedLoader } from '../cache/cached-loader.js';
import { createAuthFeature } from '../features/auth/auth-feature.js';
import { createBootstrapFeature } from '../features/bootstrap/bootstrap-feature.js';
import { createSessionGuard } from '../features/auth/auth-router.js';
import {
  createChatCallerGuard,
  createServiceCredentials,
  createSessionCredentials,
  type ChatCredentialsResolver,
} from '../features/chat/chat-credentials.js';
import { createChatEvents, type ChatEvents } from '../features/chat/chat-events.js';
import { createChatFeature } from '../features/chat/chat-feature.js';
import { createEventsFeature, type EventsFeature } from '../features/events/events-feature.js';
import { HEAP_PER_STREAM, streamsAllowed } from '../features/events/streams-allowed.js';
import { createRouteContext, type RouteContext } from '../features/route-context.js';
import type { FeatureGuards, FeatureMounter } from '../features/route-guards.js';
import { createSearchFeature } from '../features/search/search-feature.js';
import { createRouteMounter } from '../http/route-mounter.js';
import type { GatewayAccess } from './access.js';
import type { GatewayStores } from './stores.js';
import type { GatewayUpstreams } from './upstreams.js';
import type { CachedRoute } from '../http/hit-path.js';
import { createAttemptLimit } from '../http/rate-limits.js';
import { createSecretScrubber } from '../security/scrub-secrets.js';
import { createChatClient } from '../upstreams/chat/chat-client.js';
import { createSearchStatus } from '../upstreams/search/search-status.js';

/** What the frontend calls: one router per resource, and the routes the hit path answers. */
export interface GatewayFeatures {
  /** The routers, each mounting its routes of the route table (features/route-table.ts). */
  routers: RequestHandler[];
  /** Every cached route of the table that was mounted: the hit path answers their fresh hits. */
  cachedRoutes: readonly CachedRoute[];
  /** GET /api/events: open streams and the fleet's change bus. */
  events: EventsFeature;
  /** The chat server's event queue keeping folders fresh (CHAT_EVENTS), when on. */
  chatEvents: ChatEvents | undefined;
}

/** The search service's status is probed at most this often (contract section 2.1: within 5 s). */
const SEARCH_STATUS_INTERVAL_MS = 5000;
/** A chat-events lease its holder stops renewing is taken over within this (contract: 15 s). */
const CHAT_EVENTS_LEASE_MS = 8000;

/** What the features are built on. */
interface FeatureInputs {
  config: Config;
  logger: Logger;
  stores: GatewayStores;
  loader: CachedLoader;
  upstreams: GatewayUpstreams;
  access: GatewayAccess;
}

export function createGatewayFeatures(
  options: FeatureInputs & {
    maxConnections: number;
    /** Whether the gateway is draining (its readiness is built after the features). */
    isDraining: () => boolean;
  },
): GatewayFeatures {
  const { config, logger, stores, upstreams, access } = options;
  const { sessions, cookie, sessionMode } = access;
  const context = createRouteContext({ config, logger });
  const { chatClient, serviceAccount, credentials, chatEvents, mounter, chat } = createChatParts({
    ...options,
    context,
  });
  const search = createSearchFeature({
    config,
    context,
    mounter,
    upstream: upstreams.search,
    redirectUpstream: upstreams.redirect,
  });
  const bootstrap = createBootstrapFeature({
    chat: chat.service,
    serviceAccount,
    sessions,
    cookie,
    deadlineMs: config.bootstrapTimeoutMs,
    mounter,
    searchStatus: createSearchStatus({
      upstream: upstreams.search,
      clientToken: config.search.clientToken,
      deadlineMs: config.search.timeoutMs,
      intervalMs: SEARCH_STATUS_INTERVAL_MS,
    }),
  });
  const events = createEventsFeature({
    chat: chat.service,
    cache: stores.cache,
    credentials,
    sessions: sessionMode ? sessions : undefined,
    cookie: sessionMode ? cookie : undefined,
    redis: stores.redis,
    keyPrefix: config.redis.keyPrefix,
    policies: access.limits.general,
    state: stores.generalLimit,
    maxStreams: eventsMaxStreams(config.events.maxStreams, options.maxConnections, logger),
    maxStreamsPerClient: config.events.maxStreamsPerClient,
    // Without a trusted proxy, service mode cannot tell clients apart (contract section 1).
    trust: config.trustProxy === false ? undefined : access.trust,
    ipv6Prefix: config.rateLimit.ipv6Prefix,
    heartbeatSeconds: config.events.heartbeatSeconds,
    isDraining: options.isDraining,
    logger,
    mounter,
  });
  const routers = [
    search,
    events.router,
    chat.router,
    bootstrap,
    // In service mode there is no login: every chat call uses the service account.
    ...(sessionMode
      ? [
          createAuthFeature({
            chat: chatClient,
            sessions,
            cookie,
            loginLimit: createAttemptLimit(access.limits.login, stores.state),
            mounter,
          }),
        ]
      : []),
  ];
  return {
    routers,
    cachedRoutes: mounter.cachedRoutes,
    events,
    chatEvents,
  };
}

/**
 * The chat client, whose credentials each call carries (the service account, or the caller's
 * session), the chat routes, and the event queue that keeps the folders fresh.
 */
function createChatParts(options: FeatureInputs & { context: RouteContext }) {
  const { config, logger, stores, loader, upstreams } = options;
  const { sessions, cookie, sessionMode } = options.access;
  const chatClient = createChatClient({
    upstream: upstreams.chat,
    deadlineMs: config.chat.timeoutMs,
    writeDeadlineMs: config.chat.writeTimeoutMs,
    retryAfterMaxSeconds: config.retryAfterMaxSeconds,
    maxJsonDepth: config.upstreamLimits.maxJsonDepth,
    // Every credential the schema marks (config.secrets), never a hand-kept list.
    scrub: createSecretScrubber(config.secrets),
  });
  const serviceAccount =
    sessionMode || config.chat.email === undefined || config.chat.apiKey === undefined
      ? undefined
      : { email: config.chat.email, apiKey: config.chat.apiKey };
  const credentials = serviceAccount
    ? createServiceCredentials(serviceAccount)
    : createSessionCredentials({ sessions, cookie });
  const mounter = createFeatureMounter({ ...options, credentials });
  const chat = createChatFeature({ client: chatClient, loader, mounter });
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
  return { chatClient, serviceAccount, credentials, chat, chatEvents, mounter };
}

/**
 * Mounts the route table's routes: a guard for each auth kind (the chat caller, and the session
 * in session mode), and each cached route's windows from its variables.
 */
function createFeatureMounter(
  options: FeatureInputs & { context: RouteContext; credentials: ChatCredentialsResolver },
): FeatureMounter {
  const { config, access, loader } = options;
  const guards: FeatureGuards = {
    chatCaller: createChatCallerGuard(options.credentials),
    ...(access.sessionMode
      ? { session: createSessionGuard({ sessions: access.sessions, cookie: access.cookie }) }
      : {}),
  };
  return createRouteMounter({
    context: options.context,
    guards,
    cache: {
      loader,
      windows(resource) {
        const windows = config.cache[resource];
        if (windows === undefined) throw new Error(`no cache windows for ${resource}`);
        return windows;
      },
    },
  });
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

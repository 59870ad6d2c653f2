import type { Router } from 'express';
import type { Logger } from 'pino';
import type { CacheStore } from '../../cache/cache-store.js';
import type { SessionCookie } from '../../http/session-cookie.js';
import type { RedisConnection } from '../../redis/redis-client.js';
import type { SessionManager } from '../../sessions/session-manager.js';
import type { ChatCredentialsResolver } from '../chat/chat-credentials.js';
import type { ChatService } from '../chat/chat-service.js';
import { ROUTES } from '../route-table.js';
import { createLocalChangeBus, createRedisChangeBus, type ChangeBus } from './change-bus.js';
import { createEventHub, type EventHub } from './event-hub.js';
import type { FolderVariant } from './stream-set.js';
import type { FeatureMounter } from '../route-guards.js';
import { createEventsRouter } from './events-router.js';
import { createEventsStage } from './events-stage.js';
import type { Stage } from '../../http/edge.js';
import type { RateLimitPolicy } from '../../http/rate-limits.js';
import type { SharedState } from '../../state/shared-state.js';
import type { TrustFunction } from '../../http/client-address.js';
import { createStreamAdmission } from './stream-admission.js';

/** What the browser waits before reconnecting on its own (contract: 1000–30000 ms). */
const RETRY_MS = 3000;
/**
 * Unsent bytes past which a stream's reader is taken to have stopped reading and is dropped:
 * dozens of folder lists, never an unbounded buffer (docs/operations.md, event streams).
 */
const MAX_UNSENT_BYTES = 256 * 1024;
/** Streams' sessions are checked this often: an ended session's stream ends within 2 s. */
const SESSION_CHECK_MS = 1000;

export interface EventsFeature {
  /** Opens streams in front of the app (events-stage.ts). */
  stage: Stage;
  /** Answers what the stage leaves: refusals, other methods. */
  router: Router;
  hub: EventHub;
  /** For the loader: a write of `key` may have changed a list that streams follow. */
  stored(key: string): void;
  start(): Promise<void>;
  /**
   * A stop: ends each stream at its own moment within `withinMs` (the drain delay, contract
   * section 2.2), then stops listening for changes; resolves once the last stream has ended.
   */
  stop(withinMs: number): Promise<void>;
}

/** `GET /api/events` (contract section 2.2): the hub, the fleet's change bus and the route. */
export function createEventsFeature(options: {
  chat: ChatService;
  cache: CacheStore;
  credentials: ChatCredentialsResolver;
  sessions: SessionManager | undefined;
  cookie: SessionCookie | undefined;
  redis: RedisConnection | undefined;
  keyPrefix: string;
  /** The general rate limits: opening a stream counts as a request. */
  policies: readonly RateLimitPolicy[];
  state: SharedState;
  maxStreams: number;
  /** EVENTS_MAX_STREAMS_PER_CLIENT: per chat user, or per client address (stream-admission.ts). */
  maxStreamsPerClient: number;
  /** The proxies trusted to name the client (TRUST_PROXY); undefined when none is. */
  trust: TrustFunction | undefined;
  /** RATE_LIMIT_IPV6_PREFIX: an IPv6 client counts as its network, as for the rate limits. */
  ipv6Prefix: number;
  heartbeatSeconds: number;
  isDraining(): boolean;
  logger: Logger;
  mounter: FeatureMounter;
}): EventsFeature {
  const { chat, cache, sessions } = options;
  const keyOf = (variant: FolderVariant) => chat.channelFoldersKey(variant === 'archived');
  const hub = createEventHub({
    read: (variant) => cache.get(keyOf(variant)),
    ...(sessions ? { sessionsAlive: (ids) => sessions.alive(ids) } : {}),
    retryMs: RETRY_MS,
    heartbeatMs: options.heartbeatSeconds * 1000,
    maxUnsentBytes: MAX_UNSENT_BYTES,
    sessionCheckMs: SESSION_CHECK_MS,
    logger: options.logger,
  });
  const bus: ChangeBus = options.redis
    ? createRedisChangeBus({
        redis: options.redis,
        prefix: options.keyPrefix,
        logger: options.logger,
      })
    : createLocalChangeBus();
  bus.subscribe((variant) => void hub.changed(variant));
  const route = {
    hub,
    chat,
    credentials: options.credentials,
    cookie: options.cookie,
    admission: createStreamAdmission({
      hub,
      maxStreams: options.maxStreams,
      maxPerClient: options.maxStreamsPerClient,
      trust: options.trust,
      ipv6Prefix: options.ipv6Prefix,
      isDraining: () => options.isDraining(),
    }),
  };
  return {
    stage: createEventsStage({
      ...route,
      path: ROUTES.events.path,
      policies: options.policies,
      state: options.state,
    }),
    router: createEventsRouter({ ...route, mounter: options.mounter }),
    hub,
    stored(key) {
      if (key === keyOf('archived')) bus.publish('archived');
      else if (key === keyOf('active')) bus.publish('active');
    },
    start: () => bus.start(),
    async stop(withinMs) {
      // The streams still open keep hearing of changes until each ends.
      await hub.closeSpread(withinMs);
      bus.close();
    },
  };
}

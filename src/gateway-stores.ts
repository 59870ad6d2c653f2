import type { Logger } from 'pino';
import type { Config } from '../config/load-config.js';
import { createBodyLayer } from './cache/body-layer.js';
import type { CacheStore } from './cache/cache-store.js';
import {
  SOLO_FLIGHTS,
  createRedisFlights,
  type FlightCoordinator,
} from './cache/flight-coordinator.js';
import { createMemoryCacheStore } from './cache/memory-cache-store.js';
import { createRedisCacheStore } from './cache/redis-cache-store.js';
import type { Lifecycle } from './lifecycle/lifecycle.js';
import { createRedisClient, type RedisConnection } from './redis/redis-client.js';
import { createBreaker, type Breaker } from './resilience/circuit-breaker.js';
import { createMemorySessionStore } from './sessions/memory-session-store.js';
import { createRedisSessionStore } from './sessions/redis-session-store.js';
import type { SessionStore } from './sessions/session-store.js';
import { SOLO_LEASE, createRedisLease, type Lease } from './state/lease.js';
import { createMemoryCounters } from './state/memory-counters.js';
import { createMemorySharedState } from './state/memory-shared-state.js';
import { createRedisSharedState } from './state/redis-shared-state.js';
import type { SharedState } from './state/shared-state.js';

/** Where the gateway keeps what requests share: Redis when configured, else this process. */
export interface GatewayStores {
  redis: RedisConnection | undefined;
  cache: CacheStore;
  sessions: SessionStore;
  state: SharedState;
  /** One upstream call per key across the fleet (this process alone without Redis). */
  flights: FlightCoordinator;
  /** A lease one instance of the deployment holds at a time (the one instance without Redis). */
  lease(key: string, ttlMs: number): Lease;
  /** The breakers of each use of Redis, by name (none without Redis). */
  breakers: Record<string, Breaker>;
}

/** How long a session write waits for a replica to confirm it (Sentinel, Cluster). */
const SESSION_REPLICA_WAIT_MS = 1000;

/** Counters kept in process at most (each a client address or a live session). */
const MAX_MEMORY_COUNTERS = 100_000;

/**
 * The stores, in process or on Redis. With Redis, the connection, each use's breaker and the
 * single-flight subscriber register their start and close with `lifecycle` here.
 */
export function createGatewayStores(
  config: Config,
  logger: Logger,
  now: () => number,
  lifecycle: Lifecycle,
): GatewayStores {
  const counters = createMemoryCounters({ maxCounters: MAX_MEMORY_COUNTERS, now });
  const redis = createRedisClient({ redis: config.redis, logger });
  if (redis === undefined) {
    const cache = createMemoryCacheStore({ maxBytes: config.cacheMaxBytes, now });
    const sessions = createMemorySessionStore({ maxSessions: config.session.memoryMax, now });
    const state = createMemorySharedState({ counters, cache, exists: (key) => sessions.has(key) });
    return {
      redis: undefined,
      cache,
      sessions,
      state,
      flights: SOLO_FLIGHTS,
      lease: () => SOLO_LEASE,
      breakers: {},
    };
  }
  // A Redis that is down is a degraded cache, never a failed start: it keeps reconnecting.
  lifecycle.onStart('redis', () => redis.connect());
  lifecycle.onClose('redis', ({ force }) =>
    force ? redis.disconnect() : redis.quit().catch(() => redis.disconnect()),
  );
  // One breaker per use of Redis: a cache that cannot write (a Redis out of memory) must not
  // take sessions or rate limits down with it. Three failures and that use skips Redis for a
  // second rather than paying its command timeout on every request.
  const breakers: Record<string, Breaker> = {};
  const breaker = (use: string) => {
    const name = `redis-${use}`;
    const made = createBreaker({
      name,
      thresholds: { failurePercent: 50, minRequests: 3, windowSeconds: 5, openSeconds: 1 },
      logger,
      isFailure: () => true,
      openError: () => new Error(`redis (${use}) circuit open`),
      deadlineMs: config.redis.commandTimeoutMs,
    });
    lifecycle.onClose(name, () => made.shutdown());
    return (breakers[name] = made);
  };
  const cacheBreaker = breaker('cache');
  const flights = createRedisFlights({
    redis,
    prefix: config.redis.keyPrefix,
    // A holder that died frees the key once its longest call would have ended.
    lockMs: config.longestUpstreamDeadlineMs + 1000,
    breaker: cacheBreaker,
    logger,
  });
  lifecycle.onStart('single-flight subscriber', () => flights.start());
  lifecycle.onClose('single-flight subscriber', () => flights.close());
  // With Redis, the only in-process cache layer is the bodies held in front of it.
  const bodies = createBodyLayer({ maxBytes: config.cacheMaxBytes });
  return {
    redis,
    cache: createRedisCacheStore({ redis, breaker: cacheBreaker, bodies, logger, now }),
    flights,
    sessions: createRedisSessionStore({
      redis,
      breaker: breaker('sessions'),
      logger,
      // A failover promotes a replica: a session must be on one before the login answers.
      replicaWaitMs: config.redis.topology.kind === 'single' ? 0 : SESSION_REPLICA_WAIT_MS,
      now,
    }),
    state: createRedisSharedState({
      redis,
      breaker: breaker('limits'),
      fallback: counters,
      bodies,
      logger,
    }),
    lease: (key, ttlMs) => createRedisLease({ redis, key, ttlMs }),
    breakers,
  };
}

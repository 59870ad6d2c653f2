import type { Config } from '../../config/load-config.js';
import { createBodyLayer } from '../cache/body-layer.js';
import type { CacheStore } from '../cache/cache-store.js';
import {
  SOLO_FLIGHTS,
  createRedisFlights,
  type FlightCoordinator,
} from '../cache/flight-coordinator.js';
import { createMemoryCacheStore } from '../cache/memory-cache-store.js';
import { createRedisCacheStore } from '../cache/redis-cache-store.js';
import { UNBOUNDED, createCacheMemoryBudget } from '../cache/cache-memory-budget.js';
import type { IsolationStatus } from '../observability/metrics.js';
import { createReplicatedWrites } from '../sessions/replicated-writes.js';
import { createRedisClient, duplicateOf, type RedisConnection } from '../redis/redis-client.js';
import { createBreaker, type Breaker } from '../resilience/circuit-breaker.js';
import { createMemorySessionStore } from '../sessions/memory-session-store.js';
import { createRedisSessionStore } from '../sessions/redis-session-store.js';
import type { SessionStore } from '../sessions/session-store.js';
import { SOLO_LEASE, createRedisLease, type Lease } from '../state/lease.js';
import { createMemoryCounters, type MemoryCounters } from '../state/memory-counters.js';
import { createMemorySharedState } from '../state/memory-shared-state.js';
import { createRedisSharedState } from '../state/redis-shared-state.js';
import type { SharedState } from '../state/shared-state.js';
import { createSyncedCounters } from '../state/synced-counters.js';
import type { Wiring } from './wiring.js';

/** Where the gateway keeps what requests share: Redis when configured, else this process. */
export interface GatewayStores {
  /** The state Redis (sessions, counters, the lease, the event bus), if any. */
  redis: RedisConnection | undefined;
  cache: CacheStore;
  sessions: SessionStore;
  state: SharedState;
  /**
   * Where the general rate limit counts: `state` itself, or with RATE_LIMIT_SYNC_MS above 0
   * (and Redis) this process's counts, added to Redis at most that often. The login limit
   * always counts in `state`, exactly.
   */
  generalLimit: SharedState;
  /** One upstream call per key across the fleet (this process alone without Redis). */
  flights: FlightCoordinator;
  /** A lease one instance of the deployment holds at a time (the one instance without Redis). */
  lease(key: string, ttlMs: number): Lease;
  /** The breakers of each use of Redis, by name (none without Redis). */
  breakers: Record<string, Breaker>;
  /** What the stores' bulkheads counted (contract section 7). */
  isolation(): Pick<IsolationStatus, 'sessionWritesUnreplicated' | 'cacheStoreSkipped'>;
}

/**
 * Connections kept for session writes: each may hold one replication wait, so this many
 * logins at once wait for a replica without queueing behind each other.
 */
const SESSION_WRITE_CONNECTIONS = 8;

/** Counters kept in process at most (each a client address or a live session). */
const MAX_MEMORY_COUNTERS = 100_000;

/**
 * The general limit's counting: exact in Redis by default; with RATE_LIMIT_SYNC_MS, local and
 * synced, its last counts sent when the gateway stops (before Redis closes: hooks close in
 * reverse order of registration).
 */
function generalLimitOf(
  options: Wiring & { state: SharedState; redis: RedisConnection; breaker: Breaker },
): SharedState {
  const { config, lifecycle } = options;
  if (config.rateLimit.syncMs === 0) return options.state;
  const synced = createSyncedCounters({
    state: options.state,
    redis: options.redis,
    breaker: options.breaker,
    syncMs: config.rateLimit.syncMs,
    maxCounters: MAX_MEMORY_COUNTERS,
    logger: options.logger,
    now: options.now,
  });
  lifecycle.onClose('rate limit sync', () => synced.close());
  return synced;
}

/** Whether REDIS_CACHE_URL names another server than REDIS_URL (a database of the same is not). */
function cacheApart(config: Config): string | undefined {
  const { cacheUrl, topology } = config.redis;
  if (cacheUrl === undefined) return undefined;
  if (topology.kind === 'single' && new URL(cacheUrl).host === new URL(topology.url).host) {
    return undefined;
  }
  return cacheUrl;
}

/** Without Redis: the cache, sessions and counters of this one process. */
function createMemoryStores(options: {
  config: Config;
  now: () => number;
  counters: MemoryCounters;
}): GatewayStores {
  const { config, now, counters } = options;
  const cache = createMemoryCacheStore({ maxBytes: config.cacheMaxBytes, now });
  const sessions = createMemorySessionStore({
    maxSessions: config.session.memoryMax,
    maxPerUser: config.session.maxPerUser,
    now,
  });
  const state = createMemorySharedState({ counters, cache, exists: (key) => sessions.has(key) });
  return {
    redis: undefined,
    cache,
    sessions,
    state,
    generalLimit: state,
    flights: SOLO_FLIGHTS,
    lease: () => SOLO_LEASE,
    breakers: {},
    isolation: () => ({ sessionWritesUnreplicated: 0, cacheStoreSkipped: {} }),
  };
}

/**
 * The connections beside the hot path's: one for background commands, and the cache's own
 * Redis when REDIS_CACHE_URL names another server. Each connects when the gateway starts and
 * closes with it; a Redis that is down is a degraded cache, never a failed start.
 */
function createRedisConnections(options: Omit<Wiring, 'now'> & { redis: RedisConnection }) {
  const { config, logger, lifecycle, redis } = options;
  const connected = (name: string, connection: RedisConnection) => {
    lifecycle.onStart(name, () => connection.connect());
    lifecycle.onClose(name, ({ force }) =>
      force ? connection.disconnect() : connection.quit().catch(() => connection.disconnect()),
    );
    return connection;
  };
  connected('redis', redis);
  const background = connected('redis (background)', duplicateOf(redis));
  background.on('error', () => undefined); // the hot path's connection reports Redis trouble
  const apartUrl = cacheApart(config);
  const cacheRedis = apartUrl
    ? connected(
        'redis (cache)',
        createRedisClient({
          redis: { ...config.redis, topology: { kind: 'single', url: apartUrl } },
          logger: logger.child({ redis: 'cache' }),
        })!,
      )
    : redis;
  return { background, cacheRedis, apart: apartUrl !== undefined };
}

/**
 * One breaker per use of Redis: a cache that cannot write (a Redis out of memory) must not take
 * sessions or rate limits down with it. Three failures and that use skips Redis for a second
 * rather than paying its command timeout on every request. `ownDeadline`: the calls carry
 * their own (session writes: the command's plus the replica wait's).
 */
function createRedisBreakers(options: Omit<Wiring, 'now'>) {
  const { config, logger, lifecycle } = options;
  const breakers: Record<string, Breaker> = {};
  const breaker = (use: string, ownDeadline = false) => {
    const name = `redis-${use}`;
    const made = createBreaker({
      name,
      thresholds: { failurePercent: 50, minRequests: 3, windowSeconds: 5, openSeconds: 1 },
      logger,
      isFailure: () => true,
      openError: () => new Error(`redis (${use}) circuit open`),
      ...(ownDeadline ? {} : { deadlineMs: config.redis.commandTimeoutMs }),
    });
    lifecycle.onClose(name, () => made.shutdown());
    return (breakers[name] = made);
  };
  return { breakers, breaker };
}

/**
 * What guards the cache's entries: the fleet's flight locks (on the cache's Redis) and, sharing
 * the state Redis, the memory budget that stops storing before that Redis runs out.
 */
function createCacheGuards(
  options: Omit<Wiring, 'now'> & {
    cacheRedis: RedisConnection;
    background: RedisConnection;
    apart: boolean;
    breaker: Breaker;
  },
) {
  const { config, logger, lifecycle, ...on } = options;
  const flights = createRedisFlights({
    redis: on.cacheRedis,
    prefix: config.redis.keyPrefix,
    // A holder that died frees the key once its longest call would have ended.
    lockMs: config.longestUpstreamDeadlineMs + 1000,
    breaker: on.breaker,
    logger,
  });
  lifecycle.onStart('single-flight subscriber', () => flights.start());
  lifecycle.onClose('single-flight subscriber', () => flights.close());
  const budget = on.apart
    ? UNBOUNDED
    : createCacheMemoryBudget({
        redis: on.background,
        maxBytes: config.redis.cacheMaxBytes,
        keyPrefix: config.redis.keyPrefix,
        logger,
      });
  lifecycle.onStart('cache memory budget', () => budget.start());
  lifecycle.onClose('cache memory budget', () => budget.stop());
  return { flights, budget };
}

/** The connections kept for session writes and their replication waits. */
function createSessionWrites(options: Omit<Wiring, 'now'> & { redis: RedisConnection }) {
  const { config, logger, lifecycle, redis } = options;
  const writes = createReplicatedWrites({
    open: () => duplicateOf(redis),
    connections: SESSION_WRITE_CONNECTIONS,
    // One server has no replica a failover could promote: nothing to wait for.
    replicaWaitMs: config.redis.topology.kind === 'single' ? 0 : config.redis.replicaWaitMs,
    commandTimeoutMs: config.redis.commandTimeoutMs,
    logger,
  });
  lifecycle.onStart('redis (session writes)', () => writes.connect());
  lifecycle.onClose('redis (session writes)', ({ force }) => writes.close(force));
  return writes;
}

/**
 * The stores, in process or on Redis. With Redis, every purpose has connections of its own
 * (contract section 7, STYLE.md "Bulkheads"): the hot path (counters, cache reads and writes,
 * session reads), session writes with their replication waits, background commands (the lease,
 * the memory budget's INFO), and each subscriber; with REDIS_CACHE_URL the cache and its
 * flight locks live on a Redis of their own. Each registers its start and close here.
 */
export function createGatewayStores(options: Wiring): GatewayStores {
  const { config, logger, now, lifecycle } = options;
  const counters = createMemoryCounters({ maxCounters: MAX_MEMORY_COUNTERS, now });
  const redis = createRedisClient({ redis: config.redis, logger });
  if (redis === undefined) return createMemoryStores({ config, now, counters });
  const { background, cacheRedis, apart } = createRedisConnections({ ...options, redis });
  const { breakers, breaker } = createRedisBreakers(options);
  const cacheBreaker = breaker('cache');
  const { flights, budget } = createCacheGuards({
    ...options,
    cacheRedis,
    background,
    apart,
    breaker: cacheBreaker,
  });
  const writes = createSessionWrites({ ...options, redis });
  const limits = breaker('limits');
  // With Redis, the only in-process cache layer is the bodies held in front of it.
  const bodies = createBodyLayer({ maxBytes: config.cacheMaxBytes });
  const state = createRedisSharedState({
    redis,
    breaker: limits,
    ...(apart ? { cache: { redis: cacheRedis, breaker: cacheBreaker } } : {}),
    fallback: counters,
    bodies,
    logger,
  });
  return {
    redis,
    cache: createRedisCacheStore({
      redis: cacheRedis,
      breaker: cacheBreaker,
      bodies,
      budget,
      logger,
      now,
    }),
    flights,
    sessions: createRedisSessionStore({
      redis,
      writes,
      breaker: breaker('sessions'),
      writeBreaker: breaker('session-writes', true),
      maxPerUser: config.session.maxPerUser,
      keyPrefix: config.redis.keyPrefix,
      lifecycle,
      logger,
      now,
    }),
    state,
    generalLimit: generalLimitOf({ ...options, state, redis, breaker: limits }),
    lease: (key, ttlMs) => createRedisLease({ redis: background, key, ttlMs }),
    breakers,
    isolation: () => ({
      sessionWritesUnreplicated: writes.unreplicated,
      cacheStoreSkipped: budget.skipped,
    }),
  };
}

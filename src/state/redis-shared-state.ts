import type { RedisConnection } from '../redis/redis-client.js';
import { Cluster } from 'ioredis';
import type { Logger } from 'pino';
import type { BodyLayer, HeldBodies } from '../cache/body-layer.js';
import type { ClaimRequest } from '../cache/flight-coordinator.js';
import { readStoredEntry, type CacheEntry } from '../cache/cache-entry.js';
import type { Breaker } from '../resilience/circuit-breaker.js';
import { createLogThrottle, type LogThrottle } from '../logging/log-throttle.js';
import type { MemoryCounters } from './memory-counters.js';
import type { Count, CounterRequest, SharedState } from './shared-state.js';
import {
  COUNT_AND_READ,
  UNCOUNT,
  claimOf,
  countOnly,
  heldArgument,
  readOnly,
  scriptArguments,
  type Reply,
} from './count-and-read-script.js';

export interface RedisSharedStateOptions {
  /** The state Redis: counters live here. */
  redis: RedisConnection;
  /** The breaker of this use of Redis: while open, counting goes to `fallback` at once. */
  breaker: Breaker;
  /**
   * Where cache entries live, when that is another Redis (REDIS_CACHE_URL), with its breaker:
   * the counters and the entry are then read in parallel, one call each, and one Redis's
   * trouble costs nothing of the other's (contract section 7).
   */
  cache?: { redis: RedisConnection; breaker: Breaker };
  /** Each instance's own floor while Redis is away. */
  fallback: MemoryCounters;
  /** Bodies this instance holds, so a hit need not carry its body over the wire again. */
  bodies: BodyLayer;
  logger: Logger;
}

/** The Redis servers an admission talks to, each with its breaker. */
interface AdmissionRedis {
  redis: RedisConnection;
  breaker: Breaker;
  cacheRedis: RedisConnection;
  cacheBreaker: Breaker;
  cluster: boolean;
  /** The cache on a Redis of its own (REDIS_CACHE_URL). */
  apart: boolean;
  throttle: LogThrottle;
}

/** One admission's script arguments, as scriptArguments laid them out. */
interface AdmissionCall {
  keys: readonly string[];
  windows: readonly number[];
  modes: readonly string[];
  n: number;
  read: string | undefined;
  held: string;
  claim: ClaimRequest | undefined;
}

/** A call through its breaker; undefined when Redis failed it (said once, throttled). */
async function attempt(
  through: Breaker,
  call: () => Promise<Reply>,
  throttle: LogThrottle,
  log: Logger | undefined,
): Promise<Reply | undefined> {
  try {
    return await through.run(call);
  } catch (error) {
    // While the breaker is open every call would fail; it logs its own state changes.
    if (!through.rejected(error)) {
      throttle.warn(
        'count-and-read',
        { err: error },
        'redis count-and-read failed; counting in process, cache miss',
        log,
      );
    }
    return undefined;
  }
}

/** The counters' part and the entry's part of the reply; undefined where Redis failed. */
async function admissionReplies(
  to: AdmissionRedis,
  call: AdmissionCall,
  log: Logger | undefined,
): Promise<{ counted: Reply | undefined; found: Reply | undefined }> {
  const { keys, windows, modes, n, read, held, claim } = call;
  const counting = () => countOnly(to.redis, keys, windows, modes, to.cluster);
  const reading = () => readOnly(to.cacheRedis, keys.slice(2 * n), held, claim);
  if (to.apart) {
    // Two Redis servers, each under its own breaker: one's trouble costs the other nothing.
    const [counted, found] = await Promise.all([
      n === 0 ? [] : attempt(to.breaker, counting, to.throttle, log),
      read === undefined ? [] : attempt(to.cacheBreaker, reading, to.throttle, log),
    ]);
    return { counted, found };
  }
  // One Redis for both: one script (a script per slot on a Cluster, all sent at once), one
  // round trip of waiting, one breaker call.
  const both = to.cluster
    ? async () => {
        const [c, r] = await Promise.all([
          n === 0 ? [] : counting(),
          read === undefined ? [] : reading(),
        ]);
        return [...c, ...r];
      }
    : () =>
        to.redis.bffCountAndReadBuffer(
          keys.length,
          ...keys,
          n,
          ...windows,
          ...modes,
          held,
          claim?.token ?? '',
          claim?.lockMs ?? 0,
        );
  const reply = await attempt(to.breaker, both, to.throttle, log);
  return { counted: reply?.slice(0, 2 * n), found: reply?.slice(2 * n) };
}

/**
 * Each counter's count from the reply, or this instance's where Redis could not count
 * (unreachable, or it refused the write: out of memory), which `unavailable` then says.
 */
function countsOf(
  counters: readonly CounterRequest[],
  counted: Reply | undefined,
  inProcess: (c: CounterRequest) => Count | undefined,
): { counts: (Count | undefined)[]; unavailable: boolean } {
  let unavailable = false;
  const counts = counters.map((c, i): Count | undefined => {
    const count = counted?.[2 * i] as number | undefined;
    if (count === undefined || count === -2) {
      unavailable = true;
      return inProcess(c);
    }
    return count < 0 ? undefined : { count, resetMs: counted![2 * i + 1] as number };
  });
  return { counts, unavailable };
}

/** The entry the script found, served from the bodies this instance holds where it can. */
function entryOf(
  found: Reply | undefined,
  read: string,
  known: HeldBodies | undefined,
  bodies: BodyLayer,
  log: Logger,
): CacheEntry | undefined {
  const [raw, omitted] = found ?? [];
  if (!(raw instanceof Buffer)) return undefined;
  const bodyOmitted = omitted === 1 && known !== undefined;
  const entry = readStoredEntry(
    raw,
    read,
    log,
    bodyOmitted ? { bodies: known.body, digest: known.digest } : undefined,
  );
  if (entry === undefined || bodyOmitted) return entry;
  // Served from what the layer holds: the same Buffer as concurrent reads of this body.
  const { body } = bodies.set(read, entry);
  return { ...entry, body: body.identity, ...(body.encoded && { encoded: body.encoded }) };
}

export function createRedisSharedState(options: RedisSharedStateOptions): SharedState {
  const { redis, breaker, fallback, bodies, logger } = options;
  redis.defineCommand('bffCountAndRead', { lua: COUNT_AND_READ });
  redis.defineCommand('bffUncount', { lua: UNCOUNT, numberOfKeys: 1 });
  const throttle = createLogThrottle(logger);
  const cacheRedis = options.cache?.redis ?? redis;
  const to: AdmissionRedis = {
    redis,
    breaker,
    cacheRedis,
    cacheBreaker: options.cache?.breaker ?? breaker,
    cluster: redis instanceof Cluster,
    apart: cacheRedis !== redis,
    throttle,
  };
  if (to.apart) cacheRedis.defineCommand('bffCountAndRead', { lua: COUNT_AND_READ });

  /** This instance's count where Redis could not count; a guarded counter needs Redis. */
  const inProcess = (c: CounterRequest): Count | undefined =>
    c.guard === undefined ? fallback.count(c) : undefined;

  return {
    async countAndRead(counters, read, log, claim) {
      const { keys, windows, modes } = scriptArguments(counters, read, claim);
      const known = read === undefined ? undefined : bodies.get(read);
      const n = counters.length;
      const { counted, found } = await admissionReplies(
        to,
        { keys, windows, modes, n, read, held: heldArgument(known), claim },
        log,
      );
      const { counts, unavailable } = countsOf(counters, counted, inProcess);
      return {
        counts,
        entry: read === undefined ? undefined : entryOf(found, read, known, bodies, log ?? logger),
        ...(unavailable && n > 0 ? { unavailable: true } : {}),
        ...claimOf(found?.[2], claim),
      };
    },
    async uncount(counters, log) {
      try {
        // One key each: on a cluster they may live in different slots.
        await breaker.run(() => Promise.all(counters.map((c) => redis.bffUncount(c.key))));
      } catch (error) {
        throttle.warn('uncount', { err: error }, 'redis uncount failed; lowered in process', log);
        for (const c of counters) fallback.uncount(c);
      }
    },
  };
}

import type { RedisConnection } from '../redis/redis-client.js';
import { Cluster } from 'ioredis';
import type { Logger } from 'pino';
import type { BodyLayer, HeldBodies } from '../cache/body-layer.js';
import { readStoredEntry, type CacheEntry } from '../cache/cache-entry.js';
import type { Breaker } from '../resilience/circuit-breaker.js';
import { createLogThrottle } from '../logging/log-throttle.js';
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

export function createRedisSharedState(options: RedisSharedStateOptions): SharedState {
  const { redis, breaker, fallback, bodies, logger } = options;
  redis.defineCommand('bffCountAndRead', { lua: COUNT_AND_READ });
  redis.defineCommand('bffUncount', { lua: UNCOUNT, numberOfKeys: 1 });

  const throttle = createLogThrottle(logger);
  const cluster = redis instanceof Cluster;
  const cacheRedis = options.cache?.redis ?? redis;
  const cacheBreaker = options.cache?.breaker ?? breaker;
  const apart = cacheRedis !== redis;
  if (apart) cacheRedis.defineCommand('bffCountAndRead', { lua: COUNT_AND_READ });

  /** A call through its breaker; undefined when Redis failed it (said once, throttled). */
  async function attempt(
    through: Breaker,
    call: () => Promise<Reply>,
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

  /** The entry the script found, served from the bodies this instance holds where it can. */
  function entryOf(
    raw: number | Buffer | null | undefined,
    omitted: number | Buffer | null | undefined,
    read: string,
    known: HeldBodies | undefined,
    log: Logger | undefined,
  ): CacheEntry | undefined {
    if (!(raw instanceof Buffer)) return undefined;
    const bodyOmitted = omitted === 1 && known !== undefined;
    const entry = readStoredEntry(
      raw,
      read,
      log ?? logger,
      bodyOmitted ? { bodies: known.body, digest: known.digest } : undefined,
    );
    if (entry === undefined || bodyOmitted) return entry;
    // Served from what the layer holds: the same Buffer as concurrent reads of this body.
    const { body } = bodies.set(read, entry);
    return { ...entry, body: body.identity, ...(body.encoded && { encoded: body.encoded }) };
  }

  /** This instance's count where Redis could not count; a guarded counter needs Redis. */
  const inProcess = (c: CounterRequest): Count | undefined =>
    c.guard === undefined ? fallback.count(c) : undefined;

  return {
    async countAndRead(counters, read, log, claim) {
      const { keys, windows, modes } = scriptArguments(counters, read, claim);
      const known = read === undefined ? undefined : bodies.get(read);
      const held = heldArgument(known);
      const n = counters.length;
      const counting = () => countOnly(redis, keys, windows, modes, cluster);
      const reading = () => readOnly(cacheRedis, keys.slice(2 * n), held, claim);
      let counted: Reply | undefined;
      let found: Reply | undefined;
      if (apart) {
        // Two Redis servers, each under its own breaker: one's trouble costs the other nothing.
        [counted, found] = await Promise.all([
          n === 0 ? [] : attempt(breaker, counting, log),
          read === undefined ? [] : attempt(cacheBreaker, reading, log),
        ]);
      } else {
        // One Redis for both: one script (a script per slot on a Cluster, all sent at once),
        // one round trip of waiting, one breaker call.
        const reply = await attempt(
          breaker,
          cluster
            ? async () => {
                const [c, r] = await Promise.all([
                  n === 0 ? [] : counting(),
                  read === undefined ? [] : reading(),
                ]);
                return [...c, ...r];
              }
            : () =>
                redis.bffCountAndReadBuffer(
                  keys.length,
                  ...keys,
                  n,
                  ...windows,
                  ...modes,
                  held,
                  claim?.token ?? '',
                  claim?.lockMs ?? 0,
                ),
          log,
        );
        counted = reply?.slice(0, 2 * n);
        found = reply?.slice(2 * n);
      }
      let unavailable = counted === undefined;
      const counts = counters.map((c, i): Count | undefined => {
        const count = counted?.[2 * i] as number | undefined;
        // Redis could not count (unreachable, or it refused the write: out of memory).
        if (count === undefined || count === -2) {
          unavailable = true;
          return inProcess(c);
        }
        return count < 0 ? undefined : { count, resetMs: counted![2 * i + 1] as number };
      });
      const entry =
        read === undefined ? undefined : entryOf(found?.[0], found?.[1], read, known, log);
      return {
        counts,
        entry,
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

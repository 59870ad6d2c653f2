import type { RedisConnection } from '../redis/redis-client.js';
import type { Logger } from 'pino';
import { createLogThrottle, type LogThrottle } from '../logging/log-throttle.js';
import type { BodyLayer } from './body-layer.js';
import { entryParts, joinedParts, readStoredEntry, type CacheEntry } from './cache-entry.js';
import type { MadeEncoding } from './encodings.js';
import type { Breaker } from '../resilience/circuit-breaker.js';
import type { CacheStore } from './cache-store.js';
import { lockKeyOf, waitersKeyOf, type FlightRelease } from './flight-coordinator.js';
import { UNBOUNDED, type CacheMemoryBudget } from './cache-memory-budget.js';

/**
 * The write of a miss: the entry, then the fleet's lock given back (if still ours) and the
 * key's waiters told (only if one marked it), in one round trip. A write Redis refuses (out of
 * memory) still releases the lock; the reply says whether the entry was stored. ARGV[5] 'skip'
 * releases without storing (the cache's memory budget is spent). The entry comes in its two
 * parts (cache-entry.ts, entryParts), the header line in ARGV[1] and the bodies in ARGV[6],
 * joined here: the gateway then holds no copy of the body of its own for the write, which
 * would otherwise wait for this reply and, outliving two young-generation collections on a
 * busy instance, be freed only by a full one.
 */
const STORE_AND_RELEASE = `
local stored = 'OK'
if ARGV[5] ~= 'skip' then
  stored = redis.pcall('SET', KEYS[1], ARGV[1] .. ARGV[6], 'PX', ARGV[2])
end
if redis.call('GET', KEYS[2]) == ARGV[3] then redis.call('DEL', KEYS[2]) end
if redis.call('DEL', KEYS[3]) == 1 then redis.call('PUBLISH', ARGV[4], '1') end
if type(stored) == 'table' and stored.err then return stored.err end
return 'OK'
`;

/**
 * A compressed body added to a stored entry in place, once: only while the key still holds the
 * entry it was made for (its header names the same stored-at moment, windows and digest) and
 * that entry has no body in the coding yet. The header's length for the coding is set, the
 * bytes go in their place (br after the identity body, gzip last), and the expiry stays.
 * KEYS: the entry. ARGV: the header's `"storedAt":…,"freshUntil":…,` and `"digest":"…"`, the
 * coding ('br' or 'gzip'), its bytes. Reply: 1 added, 0 not (another entry, or already there).
 */
const ADD_ENCODING = `
local value = redis.call('GET', KEYS[1])
if not value then return 0 end
local newline = string.find(value, string.char(10), 1, true)
if not newline then return 0 end
local head = string.sub(value, 1, newline - 1)
if not string.find(head, ARGV[1], 1, true) or not string.find(head, ARGV[2], 1, true) then
  return 0
end
local length = tonumber(string.match(head, '"length":(%d+),'))
local field = ARGV[3] == 'br' and 'brLength' or 'gzipLength'
local empty = '"' .. field .. '":0'
local at = string.find(head, empty, 1, true)
if not length or not at then return 0 end
local after = string.sub(head, at + #empty, at + #empty)
if after ~= ',' and after ~= '}' then return 0 end
head = string.sub(head, 1, at - 1) .. '"' .. field .. '":' .. #ARGV[4] .. string.sub(head, at + #empty)
local bodies = string.sub(value, newline + 1)
if ARGV[3] == 'br' then
  bodies = string.sub(bodies, 1, length) .. ARGV[4] .. string.sub(bodies, length + 1)
else
  bodies = bodies .. ARGV[4]
end
redis.call('SET', KEYS[1], head .. string.char(10) .. bodies, 'KEEPTTL')
return 1
`;

declare module 'ioredis' {
  interface RedisCommander {
    bffAddEncoding(
      key: string,
      windows: string,
      digest: string,
      coding: string,
      bytes: Buffer,
    ): Promise<number>;
    bffStoreAndRelease(
      key: string,
      lock: string,
      waiters: string,
      header: string,
      ttlMs: number,
      token: string,
      channel: string,
      mode: 'store' | 'skip',
      bodies: Buffer | string,
    ): Promise<string>;
  }
}

export interface RedisCacheStoreOptions {
  /** A client built by createRedisClient: fail-fast, no offline queue, key prefix applied. */
  redis: RedisConnection;
  /** The cache's own Redis breaker; while open, reads and writes skip Redis at once. */
  breaker: Breaker;
  /** The bodies held in front of Redis (body-layer.ts): a compressed body added here joins them. */
  bodies: BodyLayer;
  /** Whether an entry may be stored now (CACHE_REDIS_MAX_BYTES); everything, by default. */
  budget?: Pick<CacheMemoryBudget, 'allows'>;
  logger: Logger;
  now?: () => number;
}

/**
 * Redis-backed store shared by all gateway instances. Every fault (down, slow past the
 * command timeout, corrupt value) is a miss with one warning; requests never fail on it.
 */
/**
 * A call through the cache's breaker; a failure is a miss or a dropped write, said once
 * (throttled). While the breaker is open every call would fail: it logs its own state changes.
 */
async function guarded<T>(
  breaker: Breaker,
  throttle: LogThrottle,
  what: { kind: string; key: string; message: string },
  run: () => Promise<T>,
): Promise<T | undefined> {
  try {
    return await breaker.run(run);
  } catch (error) {
    if (!breaker.rejected(error)) {
      throttle.warn(what.kind, { err: error, key: what.key }, what.message);
    }
    return undefined;
  }
}

/** A miss's write: the entry (unless `store` is false: past the budget) and the lock back. */
async function storeAndRelease(
  redis: RedisConnection,
  key: string,
  write: { parts: { header: string; bodies: Buffer }; ttlMs: number; store: boolean },
  release: FlightRelease,
): Promise<void> {
  const reply = await redis.bffStoreAndRelease(
    key,
    lockKeyOf(key),
    waitersKeyOf(key),
    write.store ? write.parts.header : '',
    Math.max(1, write.ttlMs),
    release.token,
    release.channel,
    write.store ? 'store' : 'skip',
    write.store ? write.parts.bodies : '',
  );
  if (reply !== 'OK') throw new Error(`redis refused the entry: ${reply}`);
}

export function createRedisCacheStore(options: RedisCacheStoreOptions): CacheStore {
  const { redis, breaker, bodies, logger } = options;
  const budget = options.budget ?? UNBOUNDED;
  const now = options.now ?? Date.now;
  const throttle = createLogThrottle(logger);
  redis.defineCommand('bffStoreAndRelease', { numberOfKeys: 3, lua: STORE_AND_RELEASE });
  redis.defineCommand('bffAddEncoding', { numberOfKeys: 1, lua: ADD_ENCODING });
  return {
    backend: 'redis',
    async get(key) {
      const raw = await guarded(
        breaker,
        throttle,
        { kind: 'cache-read', key, message: 'cache read failed; treating as a miss' },
        () => redis.getBuffer(key),
      );
      return raw === null || raw === undefined ? undefined : readStoredEntry(raw, key, logger);
    },
    async set(key: string, entry: CacheEntry, release?: FlightRelease) {
      const ttlMs = entry.errorUntil - now();
      // An entry already past its windows is not worth storing; a lock still goes back.
      if (ttlMs <= 0 && release === undefined) return;
      // Past the budget nothing is stored; a lock still goes back and its waiters are told.
      const parts = entryParts(entry);
      const store = budget.allows(key, Buffer.byteLength(parts.header) + parts.bodies.length);
      if (!store && release === undefined) return;
      await guarded(
        breaker,
        throttle,
        { kind: 'cache-write', key, message: 'cache write failed; entry dropped' },
        async () => {
          if (release === undefined) await redis.set(key, joinedParts(parts), 'PX', ttlMs);
          else await storeAndRelease(redis, key, { parts, ttlMs, store }, release);
        },
      );
    },
    async addEncoding(key: string, entry: CacheEntry, made: MadeEncoding) {
      bodies.addEncoding(key, entry.digest, made);
      if (!budget.allows(key, made.bytes.length)) return;
      await guarded(
        breaker,
        throttle,
        { kind: 'cache-write', key, message: 'cache write failed; compressed body kept here only' },
        () =>
          redis.bffAddEncoding(
            key,
            `"storedAt":${entry.storedAt},"freshUntil":${entry.freshUntil},`,
            `"digest":"${entry.digest}"`,
            made.coding,
            made.bytes,
          ),
      );
    },
    health() {
      if (redis.status !== 'ready') {
        return {
          status: 'degraded',
          detail: `redis ${redis.status}; serving without the shared cache`,
        };
      }
      return breaker.state === 'open'
        ? { status: 'degraded', detail: 'redis failing; skipped until it answers again' }
        : { status: 'ok' };
    },
  };
}

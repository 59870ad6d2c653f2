import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { decodeEntry, type CacheEntry } from '../cache/cache-entry.js';
import type { Breaker } from '../resilience/circuit-breaker.js';
import type { MemoryCounters } from './memory-counters.js';
import type { Count, CounterRequest, CountAndRead, SharedState } from './shared-state.js';

/**
 * Bumps fixed-window counters and reads one key, atomically and in one round trip.
 * KEYS: a (counter, guard) pair per counter, then the key to read if any.
 * ARGV: the number of counters n, then each counter's window in ms, then '1' for each
 * counter that counts only while its guard key exists.
 * Reply: count and remaining ms per counter (-1 and 0 when its guard was missing), then the
 * value read (nil when absent).
 */
const COUNT_AND_READ = `
local n = tonumber(ARGV[1])
local out = {}
for i = 1, n do
  if ARGV[1 + n + i] == '1' and redis.call('EXISTS', KEYS[2 * i]) == 0 then
    out[2 * i - 1] = -1
    out[2 * i] = 0
  else
    local count = redis.call('INCR', KEYS[2 * i - 1])
    local ttl = redis.call('PTTL', KEYS[2 * i - 1])
    if ttl < 0 then
      ttl = tonumber(ARGV[1 + i])
      redis.call('PEXPIRE', KEYS[2 * i - 1], ttl)
    end
    out[2 * i - 1] = count
    out[2 * i] = ttl
  end
end
if #KEYS > 2 * n then out[2 * n + 1] = redis.call('GET', KEYS[2 * n + 1]) end
return out
`;

type Reply = (number | Buffer | null)[];

declare module 'ioredis' {
  interface RedisCommander {
    bffCountAndReadBuffer(
      numberOfKeys: number,
      ...keysAndArgs: (string | number)[]
    ): Promise<Reply>;
  }
}

export interface RedisSharedStateOptions {
  redis: Redis;
  /** The breaker of this use of Redis: while open, counting goes to `fallback` at once. */
  breaker: Breaker;
  /** Each instance's own floor while Redis is away. */
  fallback: MemoryCounters;
  logger: Logger;
}

export function createRedisSharedState(options: RedisSharedStateOptions): SharedState {
  const { redis, breaker, fallback, logger } = options;
  redis.defineCommand('bffCountAndRead', { lua: COUNT_AND_READ });

  function inProcess(counters: readonly CounterRequest[]): CountAndRead {
    // Guarded counters need Redis to tell a live session from a forged one: without it they
    // are not counted (the per-client limit still is).
    return {
      counts: counters.map((c) => (c.guard === undefined ? fallback.count(c) : undefined)),
      entry: undefined,
    };
  }

  return {
    async countAndRead(counters, read) {
      const keys: string[] = [];
      const windows: number[] = [];
      const guarded: string[] = [];
      for (const c of counters) {
        keys.push(c.key, c.guard ?? c.key);
        windows.push(c.windowMs);
        guarded.push(c.guard === undefined ? '0' : '1');
      }
      if (read !== undefined) keys.push(read);
      let reply: Reply;
      try {
        reply = await breaker.run(() =>
          redis.bffCountAndReadBuffer(
            keys.length,
            ...keys,
            counters.length,
            ...windows,
            ...guarded,
          ),
        );
      } catch (error) {
        // While the breaker is open every call would log; it logs its own state changes.
        if (breaker.state !== 'open') {
          logger.warn(
            { err: error },
            'redis count-and-read failed; counting in process, cache miss',
          );
        }
        return inProcess(counters);
      }
      const counts: (Count | undefined)[] = counters.map((_, i) => {
        const count = reply[2 * i] as number;
        return count < 0 ? undefined : { count, resetMs: reply[2 * i + 1] as number };
      });
      const raw = read === undefined ? null : (reply[2 * counters.length] ?? null);
      let entry: CacheEntry | undefined;
      if (raw instanceof Buffer) {
        entry = decodeEntry(raw);
        if (entry === undefined)
          logger.warn({ key: read }, 'corrupt cache entry ignored; treating as a miss');
      }
      return { counts, entry };
    },
  };
}

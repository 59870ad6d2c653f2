import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { BodyLayer } from '../cache/body-layer.js';
import { decodeEntry, type CacheEntry } from '../cache/cache-entry.js';
import type { Breaker } from '../resilience/circuit-breaker.js';
import type { MemoryCounters } from './memory-counters.js';
import type { Count, CounterRequest, CountAndRead, SharedState } from './shared-state.js';

/**
 * Bumps fixed-window counters and reads one cache entry, atomically and in one round trip.
 * KEYS: a (counter, guard) pair per counter, then the entry's key if one is read.
 * ARGV: the number of counters n, each counter's window in ms, '1' for each counter that
 * counts only while its guard key exists, then the digest of the body the caller already holds
 * ('' for none).
 * Reply: count and remaining ms per counter (-1 and 0 when its guard was missing), then the
 * entry, and 1 when only its header line was sent because its body still has the caller's
 * digest (else 0). The header is read with GETRANGE first, so a confirmed body is never copied.
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
if #KEYS > 2 * n then
  local key = KEYS[2 * n + 1]
  local known = ARGV[2 + 2 * n]
  if known ~= '' then
    local head = redis.call('GETRANGE', key, 0, 1023)
    local newline = string.find(head, string.char(10), 1, true)
    if newline and string.find(head, '"digest":"' .. known .. '"', 1, true) then
      out[2 * n + 1] = string.sub(head, 1, newline)
      out[2 * n + 2] = 1
      return out
    end
  end
  out[2 * n + 1] = redis.call('GET', key)
  out[2 * n + 2] = 0
end
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
  /** Bodies this instance holds, so a hit need not carry its body over the wire again. */
  bodies: BodyLayer;
  logger: Logger;
}

export function createRedisSharedState(options: RedisSharedStateOptions): SharedState {
  const { redis, breaker, fallback, bodies, logger } = options;
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
      const known = read === undefined ? undefined : bodies.get(read);
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
            known?.digest ?? '',
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
        const bodyOmitted = reply[2 * counters.length + 1] === 1 && known !== undefined;
        entry = decodeEntry(raw, bodyOmitted ? known.body : undefined);
        if (entry !== undefined && bodyOmitted && entry.digest !== known.digest) entry = undefined;
        if (entry === undefined) {
          logger.warn({ key: read }, 'corrupt cache entry ignored; treating as a miss');
        } else if (!bodyOmitted && read !== undefined) {
          bodies.set(read, entry);
        }
      }
      return { counts, entry };
    },
  };
}

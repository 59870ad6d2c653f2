import type { RedisConnection } from '../redis/redis-client.js';
import type { HeldBodies } from '../cache/body-layer.js';
import type { ClaimRequest, FlightClaim } from '../cache/flight-coordinator.js';
import { lockKeyOf, waitersKeyOf } from '../cache/flight-coordinator.js';
import type { CounterRequest } from './shared-state.js';

/*
 * The admission's Redis scripts and how their keys, arguments and replies are laid out
 * (redis-shared-state.ts calls them): one script for a single Redis, one per slot on a Cluster,
 * one per Redis when the cache has its own.
 */

/**
 * Bumps fixed-window counters and reads one cache entry, atomically and in one round trip.
 * KEYS: a (counter, guard) pair per counter, then the entry's key if one is read, then (when
 * the read may claim the fleet's lock on a miss) the entry's lock and waiters' mark.
 * ARGV: the number of counters n, each counter's window in ms, each counter's mode ('c' count,
 * 'g' count only while its guard key exists), then the digest of the body the caller already
 * holds and the compressed bodies it holds with it ('<digest> <b if br><g if gzip>', '' for
 * none), then the claim's token and lock lifetime ('' and 0 for no claim).
 * Reply: count and remaining ms per counter (-1 when its guard was missing, -2 when Redis
 * refused the write, e.g. out of memory), then the entry, 1 when only its header line was
 * sent because its body still has the caller's digest and it has no compressed body the caller
 * lacks (else 0), and what became of the claim:
 * 0 none asked or an entry was found, 1 the lock is now the caller's, 2 another holds it (and
 * the key is marked as waited for). The header is read with GETRANGE first, so a confirmed body
 * is never copied. Counting failures never cost the read.
 */
export const COUNT_AND_READ = `
local n = tonumber(ARGV[1])
local out = {}
for i = 1, n do
  local key = KEYS[2 * i - 1]
  local window = tonumber(ARGV[1 + i])
  local mode = ARGV[1 + n + i]
  if mode == 'g' and redis.call('EXISTS', KEYS[2 * i]) == 0 then
    out[2 * i - 1] = -1
    out[2 * i] = 0
  else
    local count = redis.pcall('INCR', key)
    if type(count) == 'table' then
      out[2 * i - 1] = -2
      out[2 * i] = 0
    else
      local ttl = redis.call('PTTL', key)
      if ttl < 0 then
        ttl = window
        redis.pcall('PEXPIRE', key, ttl)
      end
      out[2 * i - 1] = count
      out[2 * i] = ttl
    end
  end
end
if #KEYS > 2 * n then
  local entry = KEYS[2 * n + 1]
  local digest, held = string.match(ARGV[2 + 2 * n], '^(%S+) (%a*)$')
  if digest then
    local head = redis.call('GETRANGE', entry, 0, 1023)
    local newline = string.find(head, string.char(10), 1, true)
    if newline and string.find(head, '"digest":"' .. digest .. '"', 1, true)
      and (string.find(held, 'b', 1, true) or string.find(head, '"brLength":0,', 1, true))
      and (string.find(held, 'g', 1, true) or string.find(head, '"gzipLength":0}', 1, true)) then
      out[2 * n + 1] = string.sub(head, 1, newline)
      out[2 * n + 2] = 1
      return out
    end
  end
  local value = redis.call('GET', entry)
  out[2 * n + 1] = value
  out[2 * n + 2] = 0
  out[2 * n + 3] = 0
  local token = ARGV[3 + 2 * n]
  if not value and token ~= '' then
    -- pcall: a Redis that refuses writes (out of memory) still answers the read, unclaimed.
    local lockMs = ARGV[4 + 2 * n]
    local taken = redis.pcall('SET', KEYS[2 * n + 2], token, 'PX', lockMs, 'NX')
    if type(taken) == 'table' and taken.ok then
      out[2 * n + 3] = 1
    elseif not taken then
      redis.pcall('SET', KEYS[2 * n + 3], '1', 'PX', lockMs)
      out[2 * n + 3] = 2
    end
  end
end
return out
`;

/** Takes one back from a counter that is above zero; an expired window stays gone. */
export const UNCOUNT = `
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count > 0 then return redis.call('DECR', KEYS[1]) end
return 0
`;

/** What the caller holds of an entry, as the script's argument says it. */
export const heldArgument = (known: HeldBodies | undefined): string =>
  known === undefined
    ? ''
    : `${known.digest} ${known.body.encoded?.br ? 'b' : ''}${known.body.encoded?.gzip ? 'g' : ''}`;

const MODE = (c: CounterRequest) => (c.guard === undefined ? 'c' : 'g');

export type Reply = (number | Buffer | null)[];

declare module 'ioredis' {
  interface RedisCommander {
    bffCountAndReadBuffer(
      numberOfKeys: number,
      ...keysAndArgs: (string | number)[]
    ): Promise<Reply>;
    bffUncount(key: string): Promise<number>;
  }
}

/** The claim's outcome as the script reported it (nothing when none was asked or it found an entry). */
export function claimOf(
  state: number | Buffer | null | undefined,
  claim: ClaimRequest | undefined,
): { claim?: FlightClaim } {
  if (claim === undefined) return {};
  if (state === 1) return { claim: { state: 'ours', token: claim.token } };
  if (state === 2) return { claim: { state: 'busy' } };
  return {};
}

/**
 * The count-and-read script's keys and arguments: each counter with its guard (the counter
 * itself when it has none), then the entry, with its lock and its waiters' mark when the read
 * may claim the flight.
 */
export function scriptArguments(
  counters: readonly CounterRequest[],
  read: string | undefined,
  claim: ClaimRequest | undefined,
) {
  const keys: string[] = [];
  const windows: number[] = [];
  const modes: string[] = [];
  for (const c of counters) {
    keys.push(c.key, c.guard ?? c.key);
    windows.push(c.windowMs);
    modes.push(MODE(c));
  }
  if (read !== undefined) {
    keys.push(read);
    if (claim !== undefined) keys.push(lockKeyOf(read), waitersKeyOf(read));
  }
  return { keys, windows, modes };
}

/**
 * The counters alone, as the script's reply has them. On a Redis Cluster one script may only
 * touch one slot: each counter (with its guard, which shares its hash tag) goes as a script of
 * its own, all sent at once.
 */
export function countOnly(
  redis: RedisConnection,
  keys: readonly string[],
  windows: readonly number[],
  modes: readonly string[],
  cluster: boolean,
): Promise<Reply> {
  const n = windows.length;
  if (!cluster) {
    return redis.bffCountAndReadBuffer(2 * n, ...keys.slice(0, 2 * n), n, ...windows, ...modes);
  }
  const calls: Promise<Reply>[] = [];
  for (let i = 0; i < n; i += 1) {
    calls.push(
      redis.bffCountAndReadBuffer(2, keys[2 * i]!, keys[2 * i + 1]!, 1, windows[i]!, modes[i]!),
    );
  }
  return Promise.all(calls).then((replies) => replies.flat());
}

/** The entry alone (with its lock and waiters' mark, which share its slot): three values. */
export function readOnly(
  redis: RedisConnection,
  entryKeys: readonly string[],
  held: string,
  claim: ClaimRequest | undefined,
): Promise<Reply> {
  return redis.bffCountAndReadBuffer(
    entryKeys.length,
    ...entryKeys,
    0,
    held,
    claim?.token ?? '',
    claim?.lockMs ?? 0,
  );
}

import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { RedisConnection } from '../redis/redis-client.js';
import type { Breaker } from '../resilience/circuit-breaker.js';
import { createLogThrottle } from '../logging/log-throttle.js';
import type { Count, CounterRequest, SharedState } from './shared-state.js';

/*
 * RATE_LIMIT_SYNC_MS above 0 (contract section 1, as Kong's `sync_rate`): the general limit's
 * per-client counters counted in this process and added to Redis at most that often, instead of
 * one Redis write per request. Between two syncs an instance knows the fleet's count as of its
 * last sync plus its own since, so a fleet of N instances admits at most N × (one instance's
 * rate × the interval) past the limit before every instance has heard. The login limit never
 * comes here.
 */

/**
 * Adds a batch of local counts to one fixed-window counter. KEYS: the counter. ARGV: how many to
 * add, the window in ms. Reply: the fleet's count and the window's remaining ms; -2 when Redis
 * refused the write (out of memory).
 */
const ADD_COUNTS = `
local count = redis.pcall('INCRBY', KEYS[1], ARGV[1])
if type(count) == 'table' then return {-2, 0} end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  ttl = tonumber(ARGV[2])
  redis.pcall('PEXPIRE', KEYS[1], ttl)
end
return {count, ttl}
`;

declare module 'ioredis' {
  interface RedisCommander {
    bffAddCounts(key: string, delta: number, windowMs: number): Promise<[number, number]>;
  }
}

/** One counter as this instance knows it. */
interface Local {
  readonly request: CounterRequest;
  /** The fleet's count at the last sync, this instance's share included. */
  synced: number;
  /** Counted here and not yet sent. */
  pending: number;
  /** Sent, and not yet confirmed. */
  sending: number;
  /** When the window ends, epoch ms: Redis's word after a sync, this instance's before. */
  endsAt: number;
}

export interface SyncedCountersOptions {
  /** The shared state the limit counted in before: entries are still read through it. */
  state: SharedState;
  /** The Redis the counters live in (the state's), and the breaker of that use. */
  redis: RedisConnection;
  breaker: Breaker;
  syncMs: number;
  /** Counters held at most; one pushed out is sent first, never dropped. */
  maxCounters: number;
  logger: Logger;
  now?: () => number;
}

export interface SyncedCounters extends SharedState {
  /** Sends every count not yet sent (a stop, tests); resolves when the sync has settled. */
  sync(): Promise<void>;
  /** Stops the timer after a last sync. */
  close(): Promise<void>;
}

/**
 * A counter that needs Redis to say whether it counts at all (a session's, guarded by its
 * record): counted exactly, as before, so a forged cookie still creates no counter anywhere.
 */
const isGuarded = (c: CounterRequest): boolean => c.guard !== undefined;

/**
 * The general limit's shared state with RATE_LIMIT_SYNC_MS: the per-client counters in process,
 * guarded ones (a session's) and reads (the hit path's entry and fleet lock) through `state` as
 * before, in one call, and every `syncMs` one call per counter that changed. A sync that fails keeps its counts for the next, so a Redis outage
 * loses nothing it can later deliver; meanwhile each instance limits on its own knowledge.
 */
export function createSyncedCounters(options: SyncedCountersOptions): SyncedCounters {
  const { state, redis, breaker } = options;
  const now = options.now ?? Date.now;
  const throttle = createLogThrottle(options.logger);
  redis.defineCommand('bffAddCounts', { lua: ADD_COUNTS, numberOfKeys: 1 });
  const evicted: Local[] = [];
  const locals = new LRUCache<string, Local>({
    maxSize: options.maxCounters,
    sizeCalculation: () => 1,
    // A counter pushed out with counts not yet sent goes in the next sync.
    dispose: (local, _key, reason) => {
      if (reason === 'evict' && local.pending > 0) evicted.push(local);
    },
  });
  const dirty = new Set<Local>();

  const count = (request: CounterRequest): Count => {
    const t = now();
    let local = locals.get(request.key);
    if (local === undefined || local.endsAt <= t) {
      local = { request, synced: 0, pending: 0, sending: 0, endsAt: t + request.windowMs };
      locals.set(request.key, local);
    }
    local.pending += 1;
    dirty.add(local);
    return { count: local.synced + local.sending + local.pending, resetMs: local.endsAt - t };
  };

  const send = (local: Local) => sendCounts(redis, breaker, local, now);
  let running: Promise<void> | undefined;
  const sync = (): Promise<void> => {
    running ??= (async () => {
      const batch = [...dirty, ...evicted.splice(0)];
      dirty.clear();
      const results = await Promise.allSettled(batch.map(send));
      if (results.some((r) => r.status === 'rejected')) {
        for (const local of batch) if (local.pending > 0) dirty.add(local);
        throttle.warn('rate-limit-sync', {}, 'rate limit sync failed; counts kept for the next');
      }
    })().finally(() => (running = undefined));
    return running;
  };
  const timer = setInterval(() => void sync(), options.syncMs);
  timer.unref();

  return {
    async countAndRead(counters, read, log, claim) {
      const own = counters.map((c) => (isGuarded(c) ? undefined : count(c)));
      const exact = counters.filter(isGuarded);
      if (exact.length === 0 && read === undefined) return { counts: own, entry: undefined };
      const shared = await state.countAndRead(exact, read, log, claim);
      let next = 0;
      const counts = counters.map((c, i) => (isGuarded(c) ? shared.counts[next++] : own[i]));
      return { ...shared, counts };
    },
    uncount(counters, log) {
      for (const c of counters) {
        const local = isGuarded(c) ? undefined : locals.get(c.key);
        if (local !== undefined && local.pending > 0) local.pending -= 1;
      }
      const exact = counters.filter(isGuarded);
      return exact.length === 0 ? Promise.resolve() : state.uncount(exact, log);
    },
    sync,
    async close() {
      clearInterval(timer);
      await running;
      await sync();
    },
  };
}

/**
 * Sends one counter's pending counts and takes the fleet's count back. When Redis refuses
 * them, or cannot be reached, they go back to pending for the next sync.
 */
async function sendCounts(
  redis: RedisConnection,
  breaker: Breaker,
  local: Local,
  now: () => number,
): Promise<void> {
  const delta = local.pending;
  if (delta === 0) return;
  local.pending = 0;
  // Counts of a window that is over would land in the next one's counter.
  if (local.endsAt <= now()) return;
  local.sending += delta;
  const { key, windowMs } = local.request;
  let reply: [number, number];
  try {
    reply = await breaker.run(() => redis.bffAddCounts(key, delta, windowMs));
    if (reply[0] === -2) throw new Error('redis refused the rate limit counts');
  } catch (error) {
    local.pending += delta;
    throw error;
  } finally {
    local.sending -= delta;
  }
  const [fleet, ttl] = reply;
  local.synced = fleet;
  local.endsAt = now() + ttl;
}

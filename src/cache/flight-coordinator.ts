import { randomBytes } from 'node:crypto';
import { Cluster } from 'ioredis';
import type { Logger } from 'pino';
import { createLogThrottle, type LogThrottle } from '../logging/log-throttle.js';
import type { RedisConnection } from '../redis/redis-client.js';
import type { Breaker } from '../resilience/circuit-breaker.js';

/**
 * One upstream call per key across the fleet (contract section 4), priced for the common case
 * (issue 18): nobody else is asking. An uncontended miss takes its lock inside the cache read
 * that found nothing (the admission script) and gives it back inside the write that stores the
 * answer, so coordination adds no round trip of its own. Only when another instance is loading
 * the same key does anything more happen: the waiter marks the key, subscribes to that key's
 * channel, and the holder's write publishes there because the mark exists. Nobody else hears of
 * a miss.
 *
 * Keys: the lock is `flight:<key>`, the waiters' mark `flight-waiters:<key>`. Cache keys carry a
 * hash tag, so on a Redis Cluster both sit in their entry's slot and one script can touch all
 * three.
 */

/** What a write of the entry carries to release the lock and tell any waiters, in one call. */
export interface FlightRelease {
  readonly token: string;
  /** The key's own channel (pub/sub channel names take no key prefix). */
  readonly channel: string;
}

/** The right to load one key for the whole fleet, until the entry is stored or `done`. */
export interface Flight {
  /** Whether other instances may be waiting (a fleet lock, not this process alone). */
  readonly shared: boolean;
  /** For the store's write (shared flights only): release and announcement ride on it. */
  readonly release?: FlightRelease;
  /** Releases the lock without a write (the load failed) and tells the waiters, if any. */
  done(): Promise<void>;
}

/** What the admission script's read said of the lock, when it was asked to take it. */
export type FlightClaim =
  | { readonly state: 'ours'; readonly token: string; consumed?: boolean }
  | { readonly state: 'busy' };

/** A lock the admission script may take in the same call as its read. */
export interface ClaimRequest {
  readonly token: string;
  readonly lockMs: number;
}

/** A wait for another instance's load of a key. */
export interface FlightWait {
  /** Resolves once the key's channel is subscribed: a read after it cannot miss the news. */
  readonly ready: Promise<void>;
  /** True when the holder announced the key within `ms`; false when the wait ran out. */
  settled(ms: number): Promise<boolean>;
  cancel(): void;
}

export interface FlightCoordinator {
  /** Arguments for a claim inside a cache read; undefined without a fleet (this process alone). */
  claimRequest(): ClaimRequest | undefined;
  /** The flight of a lock the admission script took for this request. */
  adopt(key: string, claim: FlightClaim & { state: 'ours' }): Flight;
  /** The lock, or 'busy' (and the key marked as waited for) while another instance holds it. */
  acquire(key: string): Promise<Flight | 'busy'>;
  /** Subscribes to the key's channel; read the store after `ready`, then wait. */
  wait(key: string): FlightWait;
  start(): Promise<void>;
  close(): Promise<void>;
}

export const lockKeyOf = (key: string) => `flight:${key}`;
export const waitersKeyOf = (key: string) => `flight-waiters:${key}`;

const ALONE: Flight = { shared: false, done: () => Promise.resolve() };
const NO_WAIT: FlightWait = {
  ready: Promise.resolve(),
  settled: () => Promise.resolve(false),
  cancel: () => undefined,
};

/** One process: its own in-flight map is already the whole fleet. */
export const SOLO_FLIGHTS: FlightCoordinator = {
  claimRequest: () => undefined,
  adopt: () => ALONE,
  acquire: () => Promise.resolve(ALONE),
  wait: () => NO_WAIT,
  start: () => Promise.resolve(),
  close: () => Promise.resolve(),
};

/** Takes the lock, or marks the key as waited for when another instance holds it. */
const ACQUIRE = `
if redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then return 1 end
redis.call('SET', KEYS[2], '1', 'PX', ARGV[2])
return 0
`;

/**
 * Compare-and-delete (a lock that expired and was taken by another instance is not ours), and
 * the announcement only if somebody marked the key. Every key is in the entry's slot.
 */
export const RELEASE_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
if redis.call('DEL', KEYS[2]) == 1 then redis.call('PUBLISH', ARGV[2], '1') end
return 1
`;

declare module 'ioredis' {
  interface RedisCommander {
    bffAcquireFlight(lock: string, waiters: string, token: string, lockMs: number): Promise<number>;
    bffReleaseFlight(
      lock: string,
      waiters: string,
      token: string,
      channel: string,
    ): Promise<number>;
  }
}

export interface RedisFlightOptions {
  redis: RedisConnection;
  /** The deployment's key prefix: channel names carry it themselves. */
  prefix: string;
  /** How long a lock lives if its holder dies: the longest upstream deadline and a margin. */
  lockMs: number;
  breaker: Breaker;
  logger: Logger;
}

export function createRedisFlights(options: RedisFlightOptions): FlightCoordinator {
  const { redis, prefix, lockMs, breaker } = options;
  redis.defineCommand('bffAcquireFlight', { numberOfKeys: 2, lua: ACQUIRE });
  redis.defineCommand('bffReleaseFlight', { numberOfKeys: 2, lua: RELEASE_LUA });
  // A connection of its own: one in subscriber mode can run no other command. It subscribes
  // only while this instance waits for a key another instance loads.
  const subscriber: RedisConnection =
    redis instanceof Cluster ? redis.duplicate() : redis.duplicate();
  const throttle = createLogThrottle(options.logger);
  const announcements = createAnnouncements(subscriber, throttle);
  // Unique across the fleet and cheap: a random instance id and a counter.
  const instance = randomBytes(9).toString('base64url');
  let sequence = 0;
  const channelOf = (key: string) => `${prefix}flight:${key}`;

  function flightOf(key: string, token: string): Flight {
    const release = { token, channel: channelOf(key) };
    return {
      shared: true,
      release,
      async done() {
        try {
          await breaker.run(() =>
            redis.bffReleaseFlight(lockKeyOf(key), waitersKeyOf(key), token, release.channel),
          );
        } catch (error) {
          // Waiters fall back to their own call when their wait runs out.
          throttle.warn('flight-done', { err: error }, 'flight release failed');
        }
      },
    };
  }

  return {
    claimRequest: () => ({ token: `${instance}.${(sequence += 1)}`, lockMs }),
    adopt: (key, claim) => flightOf(key, claim.token),
    async acquire(key) {
      const token = `${instance}.${(sequence += 1)}`;
      let taken: number;
      try {
        taken = await breaker.run(() =>
          redis.bffAcquireFlight(lockKeyOf(key), waitersKeyOf(key), token, lockMs),
        );
      } catch (error) {
        throttle.warn('flight-lock', { err: error }, 'flight lock unavailable; loading alone');
        return ALONE;
      }
      return taken === 1 ? flightOf(key, token) : 'busy';
    },
    wait: (key) => announcements.wait(channelOf(key)),
    async start() {
      await subscriber.connect().catch(() => undefined);
    },
    close() {
      announcements.close();
      subscriber.disconnect();
      return Promise.resolve();
    },
  };
}

/**
 * Waits for announcements on a key's channel, over the one subscriber connection: a channel is
 * subscribed while anybody on this instance waits on it, and one message wakes them all.
 */
function createAnnouncements(subscriber: RedisConnection, throttle: LogThrottle) {
  const waiters = new Map<string, Set<() => void>>();
  subscriber.on('message', (channel: string) => {
    const wake = waiters.get(channel);
    if (!wake) return;
    waiters.delete(channel);
    subscriber.unsubscribe(channel).catch(() => undefined);
    for (const resolve of wake) resolve();
  });
  // Reported by the main connection already; the subscriber reconnects on its own (ioredis
  // subscribes its channels again when it does).
  subscriber.on('error', () => undefined);

  function wait(channel: string): FlightWait {
    let wake: (() => void) | undefined;
    const announced = new Promise<void>((resolve) => (wake = resolve));
    let set = waiters.get(channel);
    const first = set === undefined;
    if (!set) waiters.set(channel, (set = new Set()));
    set.add(wake!);
    const ready = first
      ? subscriber.subscribe(channel).then(
          () => undefined,
          (error: unknown) => {
            throttle.warn('flight-subscribe', { err: error }, 'flight channel unavailable');
          },
        )
      : Promise.resolve();
    const cancel = () => {
      const current = waiters.get(channel);
      current?.delete(wake!);
      if (current?.size === 0) {
        waiters.delete(channel);
        subscriber.unsubscribe(channel).catch(() => undefined);
      }
    };
    return {
      ready,
      async settled(ms) {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<false>((resolve) => {
          timer = setTimeout(resolve, ms, false);
        });
        const result = await Promise.race([announced.then(() => true as const), timeout]);
        clearTimeout(timer);
        cancel();
        return result;
      },
      cancel,
    };
  }

  return {
    wait,
    /** Wakes every waiter (a stop): each reads the store, then loads on its own if it is empty. */
    close() {
      for (const wake of waiters.values()) for (const resolve of wake) resolve();
      waiters.clear();
    },
  };
}

import { randomUUID } from 'node:crypto';
import { Cluster } from 'ioredis';
import type { Logger } from 'pino';
import { createLogThrottle } from '../logging/log-throttle.js';
import type { RedisConnection } from '../redis/redis-client.js';
import type { Breaker } from '../resilience/circuit-breaker.js';

/** The right to load one key for the whole fleet, until `done`. */
export interface Flight {
  /** Whether other instances may be waiting (a fleet lock, not this process alone). */
  readonly shared: boolean;
  /** Releases the lock (only if still ours) and tells the waiters the key is settled. */
  done(): Promise<void>;
}

/** A wait for another instance's load of a key, registered before the lock is tried. */
export interface FlightWait {
  /** True when the holder announced the key within `ms`; false when the wait ran out. */
  settled(ms: number): Promise<boolean>;
  cancel(): void;
}

/**
 * One upstream call per key across the fleet (contract section 4): a miss takes a short lock
 * in Redis; the other instances' misses on that key wait for the holder's announcement (pub/sub,
 * not polling) and then read the stored entry.
 */
export interface FlightCoordinator {
  listen(key: string): FlightWait;
  /** The lock, or 'busy' while another instance holds it. A Redis that cannot say grants it. */
  acquire(key: string): Promise<Flight | 'busy'>;
  start(): Promise<void>;
  close(): Promise<void>;
}

const ALONE: Flight = { shared: false, done: () => Promise.resolve() };

/** One process: its own in-flight map is already the whole fleet. */
export const SOLO_FLIGHTS: FlightCoordinator = {
  listen: () => ({ settled: () => Promise.resolve(false), cancel: () => undefined }),
  acquire: () => Promise.resolve(ALONE),
  start: () => Promise.resolve(),
  close: () => Promise.resolve(),
};

/**
 * Compare-and-delete (a lock that expired and was taken by another instance is not ours), then
 * the announcement, in one round trip. PUBLISH touches no key, so this works on a cluster too.
 */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
end
redis.call('PUBLISH', ARGV[2], ARGV[3])
return 1
`;

declare module 'ioredis' {
  interface RedisCommander {
    bffReleaseFlight(
      key: string,
      token: string,
      channel: string,
      announced: string,
    ): Promise<number>;
  }
}

export interface RedisFlightOptions {
  redis: RedisConnection;
  /** The channel announcements go on: per deployment (the key prefix), not per key. */
  channel: string;
  /** How long a lock lives if its holder dies: the longest upstream deadline and a margin. */
  lockMs: number;
  breaker: Breaker;
  logger: Logger;
}

/**
 * Locks are `flight:<key>` with a random token and an expiry, released by compare-and-delete.
 * Announcements go on one channel for the deployment, received by one subscriber connection per
 * instance; waiters register before the lock is tried, so an announcement cannot slip between a
 * failed attempt and the wait.
 */
export function createRedisFlights(options: RedisFlightOptions): FlightCoordinator {
  const { redis, channel, lockMs, breaker } = options;
  redis.defineCommand('bffReleaseFlight', { numberOfKeys: 1, lua: RELEASE });
  // A connection of its own: one in subscriber mode can run no other command.
  const subscriber: RedisConnection =
    redis instanceof Cluster ? redis.duplicate() : redis.duplicate();
  const waiters = new Map<string, Set<() => void>>();
  const throttle = createLogThrottle(options.logger);

  subscriber.on('message', (from: string, key: string) => {
    if (from !== channel) return;
    const wake = waiters.get(key);
    if (!wake) return;
    waiters.delete(key);
    for (const resolve of wake) resolve();
  });
  // Reported by the main connection already; the subscriber reconnects on its own, and
  // subscribes again each time it is ready (a Redis that was down at start included).
  subscriber.on('error', () => undefined);
  subscriber.on('ready', () => {
    subscriber.subscribe(channel).catch((error: unknown) => {
      throttle.warn('flight-subscribe', { err: error }, 'flight channel unavailable for now');
    });
  });

  return {
    listen(key) {
      let wake: (() => void) | undefined;
      const announced = new Promise<void>((resolve) => (wake = resolve));
      let set = waiters.get(key);
      if (!set) waiters.set(key, (set = new Set()));
      set.add(wake!);
      const cancel = () => {
        const current = waiters.get(key);
        current?.delete(wake!);
        if (current?.size === 0) waiters.delete(key);
      };
      return {
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
    },
    async acquire(key) {
      const token = randomUUID();
      const lock = `flight:${key}`;
      let taken: string | null;
      try {
        taken = await breaker.run(() => redis.set(lock, token, 'PX', lockMs, 'NX'));
      } catch (error) {
        throttle.warn('flight-lock', { err: error }, 'flight lock unavailable; loading alone');
        return ALONE;
      }
      if (taken === null) return 'busy';
      return {
        shared: true,
        async done() {
          try {
            await breaker.run(() => redis.bffReleaseFlight(lock, token, channel, key));
          } catch (error) {
            // Waiters fall back to their own call when their wait runs out.
            throttle.warn('flight-done', { err: error }, 'flight announcement failed');
          }
        },
      };
    },
    async start() {
      await subscriber.connect().catch(() => undefined);
    },
    close() {
      for (const wake of waiters.values()) for (const resolve of wake) resolve();
      waiters.clear();
      subscriber.disconnect();
      return Promise.resolve();
    },
  };
}

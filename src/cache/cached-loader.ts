import type { Logger } from 'pino';
import type { CacheWindows } from '../../config/load-config.js';
import { isUpstreamFailure } from '../errors/upstream-failure.js';
import { createLogThrottle } from '../logging/log-throttle.js';
import { statusOf } from '../errors/to-problem.js';
import type { CacheEntry, Representation } from './cache-entry.js';
import { hitParams, type CacheOutcome } from './cache-status.js';
import type { CacheStore } from './cache-store.js';
import {
  SOLO_FLIGHTS,
  type Flight,
  type FlightClaim,
  type FlightCoordinator,
} from './flight-coordinator.js';

export interface Cached extends CacheOutcome {
  readonly representation: Representation;
}

/** The store's answer for a key when the caller has already read it (the hit path did). */
export interface KnownRead {
  readonly entry: CacheEntry | undefined;
  /** The fleet lock that read claimed on finding nothing: this request's to use. */
  readonly claim?: FlightClaim;
}

/** What the caller knows: the entry, if it read it already, and its request's logger. */
export interface LoaderCall {
  readonly known?: KnownRead;
  /** Warnings name the request they happened in. */
  readonly log?: Logger;
}

export interface CachedLoader {
  /**
   * Read-through (contract section 4): fresh entries are served without an upstream call;
   * stale ones at once while one background refresh runs; on an upstream failure an entry
   * still inside its error window is served instead of the error. Concurrent misses on a key
   * share one load, and the answer never waits for the cache write.
   */
  get(
    key: string,
    windows: CacheWindows,
    load: () => Promise<Representation>,
    call?: LoaderCall,
  ): Promise<Cached>;
  /**
   * Stores a representation fetched outside a read (the chat events' refresh): fresh from now,
   * with the key's windows, as a load would have stored it.
   */
  put(key: string, windows: CacheWindows, representation: Representation): Promise<void>;
  /** Resolves when every load and cache write under way has settled (shutdown, tests). */
  settled(): Promise<void>;
}

export interface CachedLoaderOptions {
  store: CacheStore;
  logger: Logger;
  /** Each entry's TTL is spread by up to ± this share, so entries written together do not expire together. */
  ttlJitterRatio?: number;
  now?: () => number;
  random?: () => number;
  /** Told how every read was answered (the cache metrics). */
  onRead?: (key: string, result: 'hit' | 'miss' | 'stale') => void;
  /** Told after each write of a key (a load, a refresh, a put): its bytes may have changed. */
  onStored?: (key: string) => void;
  /** One load per key across the fleet (Redis); this process alone by default. */
  flights?: FlightCoordinator;
  /**
   * How long a miss waits for another instance's load of its key before loading itself: half
   * of the request's upstream deadline, so its own call still fits in the rest.
   */
  flightWaitMs?: (key: string) => number;
}

/** How a load ended: fetched here (and to be stored), or stored by another instance. */
interface Loaded {
  representation: Representation;
  /** The lock to release once the entry is stored. */
  flight?: Flight;
  /** Read from the store, where another instance put it: nothing to store again. */
  fromStore?: true;
}

/** This instance's load of a key under way, or its wait for another instance's. */
interface InFlight {
  readonly loaded: Promise<Representation>;
  /** Whether it waits for another instance's load rather than loading here. */
  readonly waiting: () => boolean;
}

/** A background refresh another instance is already running. */
class RefreshedElsewhere extends Error {}

export function createCachedLoader(options: CachedLoaderOptions): CachedLoader {
  const { store, logger } = options;
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const jitter = options.ttlJitterRatio ?? 0;
  const throttle = createLogThrottle(logger);
  const flights = options.flights ?? SOLO_FLIGHTS;
  // One load per key on this instance. A key leaves the map only after the store holds the
  // result, and one Redis connection answers in order, so a request whose read missed finds
  // either the running load or the stored entry, never neither.
  // A load that waits for another instance can be overtaken by this instance's own holder of
  // the fleet lock (its admission reply came first, its request reached here later): the holder
  // then loads, and the waiter hears of it like any other waiter.
  const inflight = new Map<string, InFlight>();
  const writes = new Set<Promise<void>>();

  /**
   * The fleet's single flight for a miss: the lock and this instance loads, or another
   * instance holds it and this one waits for its announcement and reads what it stored.
   * The lock comes from the admission read when it claimed one (no round trip of its own),
   * else from `acquire`. Waiting runs out after `flightWaitMs` (the holder died, or is slow),
   * and then this instance loads itself. A background refresh whose lock is taken is left to
   * the holder.
   */
  async function fleetLoad(
    key: string,
    load: () => Promise<Representation>,
    background: boolean,
    claim: FlightClaim | undefined,
    onWait: () => void,
  ): Promise<Loaded> {
    let flight: Flight | 'busy';
    if (claim?.state === 'ours') {
      claim.consumed = true;
      flight = flights.adopt(key, claim);
    } else if (claim?.state === 'busy') {
      flight = 'busy';
    } else {
      flight = await flights.acquire(key);
      // Another instance may have stored it between this one's read and its lock.
      if (flight !== 'busy' && flight.shared) {
        const stored = await freshIn(key);
        if (stored) {
          await flight.done();
          return { representation: stored, fromStore: true };
        }
      }
    }
    if (flight !== 'busy') {
      try {
        return { representation: await load(), flight };
      } catch (error) {
        await flight.done();
        throw error;
      }
    }
    if (background) throw new RefreshedElsewhere();
    onWait();
    // Subscribed before the read, so the holder's announcement cannot slip in between.
    const wait = flights.wait(key);
    await wait.ready;
    const stored = await freshIn(key);
    if (stored) {
      wait.cancel();
      return { representation: stored, fromStore: true };
    }
    if (await wait.settled(options.flightWaitMs?.(key) ?? 0)) {
      const announced = await freshIn(key);
      if (announced) return { representation: announced, fromStore: true };
    }
    return { representation: await load() };
  }

  /** The stored entry for a key if it is fresh; a store that cannot say is a miss. */
  async function freshIn(key: string): Promise<CacheEntry | undefined> {
    const stored = await store.get(key).catch(() => undefined);
    return stored && now() < stored.freshUntil ? stored : undefined;
  }

  /** The load for a key: this request's own (`collapsed` false), or one already under way. */
  function loadOnce(
    key: string,
    windows: CacheWindows,
    load: () => Promise<Representation>,
    background = false,
    claim?: FlightClaim,
  ) {
    const running = inflight.get(key);
    if (running && !(running.waiting() && claim?.state === 'ours')) {
      return { loaded: running.loaded, collapsed: true };
    }
    let waiting = claim?.state === 'busy';
    const outcome = fleetLoad(key, load, background, claim, () => (waiting = true));
    const loaded = outcome.then((o) => o.representation);
    const record: InFlight = { loaded, waiting: () => waiting };
    inflight.set(key, record);
    const write = outcome
      .then(async ({ representation, flight, fromStore }) => {
        if (fromStore) return;
        const entry = toEntry(representation, windows, now(), 1 + jitter * (2 * random() - 1));
        if (flight?.release) {
          // Stored, released and announced in one call, so the waiters' reads find it.
          await store.set(key, entry, flight.release);
        } else {
          try {
            await store.set(key, entry);
          } finally {
            await flight?.done();
          }
        }
        options.onStored?.(key);
      })
      .catch(() => undefined)
      .finally(() => {
        if (inflight.get(key) === record) inflight.delete(key);
        writes.delete(write);
      });
    writes.add(write);
    return { loaded, collapsed: false };
  }

  function refreshInBackground(
    key: string,
    windows: CacheWindows,
    load: () => Promise<Representation>,
  ) {
    if (inflight.has(key)) return;
    loadOnce(key, windows, load, true).loaded.catch((error: unknown) => {
      if (error instanceof RefreshedElsewhere) return;
      throttle.warn(
        `refresh:${key}`,
        { err: error, key },
        'background refresh failed; stale entry kept',
      );
    });
  }

  return {
    async get(key, windows, load, call = {}) {
      const cached = await answer(key, windows, load, call);
      options.onRead?.(
        key,
        cached.cacheStatus === 'HIT' ? 'hit' : cached.cacheStatus === 'STALE' ? 'stale' : 'miss',
      );
      return cached;
    },
    async put(key, windows, representation) {
      await store.set(key, toEntry(representation, windows, now(), 1));
      options.onStored?.(key);
    },
    async settled() {
      await Promise.allSettled([...[...inflight.values()].map((f) => f.loaded), ...writes]);
    },
  };

  async function answer(
    key: string,
    windows: CacheWindows,
    load: () => Promise<Representation>,
    call: LoaderCall,
  ): Promise<Cached> {
    const entry = call.known === undefined ? await store.get(key) : call.known.entry;
    const t = now();
    if (entry && t < entry.freshUntil) {
      return {
        representation: entry,
        cacheStatus: 'HIT',
        cacheStatusParams: hitParams(entry.freshUntil, t),
      };
    }
    if (entry && t < entry.staleUntil) {
      refreshInBackground(key, windows, load);
      return {
        representation: entry,
        cacheStatus: 'STALE',
        // RFC 9211: a negative ttl is a stale answer; the refresh runs behind it.
        cacheStatusParams: `hit; ttl=${Math.floor((entry.freshUntil - t) / 1000)}`,
      };
    }
    const { loaded, collapsed } = loadOnce(key, windows, load, false, call.known?.claim);
    try {
      return {
        representation: await loaded,
        cacheStatus: 'MISS',
        cacheStatusParams: collapsed ? 'fwd=miss; collapsed' : 'fwd=miss; stored',
      };
    } catch (error) {
      if (entry && t < entry.errorUntil && isUpstreamFailure(error)) {
        (call.log ?? logger).warn({ err: error, key }, 'upstream failed; serving a stale entry');
        return {
          representation: entry,
          cacheStatus: 'STALE',
          cacheStatusParams: `fwd=stale; fwd-status=${statusOf(error.code)}`,
        };
      }
      throw error;
    }
  }
}

function toEntry(
  fresh: Representation,
  windows: CacheWindows,
  storedAt: number,
  spread: number,
): CacheEntry {
  const freshUntil = storedAt + Math.round(windows.ttlSeconds * 1000 * spread);
  const staleUntil = freshUntil + windows.staleSeconds * 1000;
  return {
    ...fresh,
    storedAt,
    freshUntil,
    staleUntil,
    errorUntil: Math.max(staleUntil, freshUntil + windows.staleIfErrorSeconds * 1000),
  };
}

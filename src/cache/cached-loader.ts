import type { Logger } from 'pino';
import type { CacheWindows } from '../../config/load-config.js';
import { isUpstreamFailure } from '../errors/upstream-failure.js';
import { createLogThrottle, type LogThrottle } from '../logging/log-throttle.js';
import { statusOf } from '../errors/to-problem.js';
import { takeRepresentation, type CacheEntry, type Representation } from './cache-entry.js';
import { hitParams, type CacheOutcome, type CacheStatus } from './cache-status.js';
import type { CacheStore } from './cache-store.js';
import type { MadeEncoding } from './encodings.js';
import { createFleetLoad, type FleetLoad, type Loaded } from './fleet-load.js';
import { createInstanceLoads } from './instance-loads.js';
import { SOLO_FLIGHTS, type FlightClaim, type FlightCoordinator } from './flight-coordinator.js';

export interface Cached extends CacheOutcome {
  readonly representation: Representation;
  /**
   * For an answer from a stored entry: keeps a compressed body made for it with the entry
   * (`keepEncoding`). A miss has none: its write takes what its answer made.
   */
  readonly keep?: (made: MadeEncoding) => void;
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
  /**
   * Keeps a compressed body made for an answer from the stored `entry` (a hit in a coding it
   * lacked) with that entry, off the answer's path, so that no instance makes it again.
   */
  keepEncoding(key: string, entry: CacheEntry, made: MadeEncoding): void;
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

export function createCachedLoader(options: CachedLoaderOptions): CachedLoader {
  const { store, logger } = options;
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const jitter = options.ttlJitterRatio ?? 0;
  const throttle = createLogThrottle(logger);

  /** Stores what this instance loaded, then releases its lock (another's store is left as it is). */
  async function storeLoaded(key: string, windows: CacheWindows, loaded: Loaded): Promise<void> {
    const { representation, flight, fromStore } = loaded;
    if (fromStore) return;
    const entry = toEntry(representation, windows, now(), 1 + jitter * (2 * random() - 1));
    await storeAndRelease(store, key, entry, flight);
    options.onStored?.(key);
  }

  const additions = createEncodingAdditions(store);
  const { keepEncoding } = additions;
  const keeper = (key: string, entry: CacheEntry) => (made: MadeEncoding) =>
    keepEncoding(key, entry, made);

  const loads = createInstanceLoads({
    fleetLoad: fleetLoadFor(options, now, throttle),
    store: storeLoaded,
    refreshFailed: (key, error) =>
      throttle.warn(
        `refresh:${key}`,
        { err: error, key },
        'background refresh failed; stale entry kept',
      ),
  });

  return {
    async get(key, windows, load, call = {}) {
      const cached = await answer(key, windows, load, call);
      options.onRead?.(key, READ_RESULTS[cached.cacheStatus]);
      return cached;
    },
    async put(key, windows, representation) {
      await store.set(key, toEntry(representation, windows, now(), 1));
      options.onStored?.(key);
    },
    keepEncoding,
    async settled() {
      await Promise.all([loads.settled(), ...additions.underWay()]);
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
    if (entry && t < entry.freshUntil) return { ...hit(entry, t), keep: keeper(key, entry) };
    if (entry && t < entry.staleUntil) {
      loads.refresh(key, windows, load);
      return { ...staleWhileRefreshing(entry, t), keep: keeper(key, entry) };
    }
    const { loaded, collapsed } = loads.once(key, windows, load, call.known?.claim);
    try {
      // The request's own hold on the body: the load lets go of its own once its write settles.
      return miss(takeRepresentation(await loaded), collapsed);
    } catch (error) {
      const stale = staleIfError(entry, t, error, key, keeper);
      if (stale === undefined) throw error;
      (call.log ?? logger).warn({ err: error, key }, 'upstream failed; serving a stale entry');
      return stale;
    }
  }
}

/** The fleet's one load per key; a wait that ran out is warned of, throttled. */
function fleetLoadFor(
  options: CachedLoaderOptions,
  now: () => number,
  throttle: LogThrottle,
): FleetLoad {
  return createFleetLoad({
    store: options.store,
    flights: options.flights ?? SOLO_FLIGHTS,
    now,
    ...(options.flightWaitMs ? { flightWaitMs: options.flightWaitMs } : {}),
    onWaitExpired: (key, waitedMs) =>
      throttle.warn(
        'flight-wait',
        { key, waitedMs },
        "another instance's load of this key did not finish within the wait; loading here too",
      ),
  });
}

/** Writes a loaded entry, then lets go of the load's lock, whether the write worked or not. */
async function storeAndRelease(
  store: CacheStore,
  key: string,
  entry: CacheEntry,
  flight: Loaded['flight'],
): Promise<void> {
  if (flight?.release) {
    // Stored, released and announced in one call, so the waiters' reads find it.
    await store.set(key, entry, flight.release);
    return;
  }
  try {
    await store.set(key, entry);
  } finally {
    await flight?.done();
  }
}

/**
 * Additions of compressed bodies under way, by entry and coding (settled() waits for them
 * too). Concurrent hits that read the entry before the first addition was kept each made
 * it known here; one write is enough.
 */
function createEncodingAdditions(store: CacheStore) {
  const additions = new Map<string, Promise<void>>();
  function keepEncoding(key: string, entry: CacheEntry, made: MadeEncoding): void {
    const addition = `${made.coding} ${entry.digest} ${entry.storedAt} ${key}`;
    if (additions.has(addition)) return;
    const added = store
      .addEncoding(key, entry, made)
      .catch(() => undefined)
      .finally(() => additions.delete(addition));
    additions.set(addition, added);
  }
  return { keepEncoding, underWay: () => additions.values() };
}

/** How each answer counts in the cache metrics (`onRead`). */
const READ_RESULTS = {
  HIT: 'hit',
  STALE: 'stale',
  MISS: 'miss',
} as const satisfies Record<CacheStatus, 'hit' | 'miss' | 'stale'>;

/** The answer from `entry` when its load failed upstream and it is inside its error window. */
function staleIfError(
  entry: CacheEntry | undefined,
  t: number,
  error: unknown,
  key: string,
  keeper: (key: string, entry: CacheEntry) => (made: MadeEncoding) => void,
): Cached | undefined {
  if (entry && t < entry.errorUntil && isUpstreamFailure(error)) {
    return { ...staleOnFailure(entry, statusOf(error.code)), keep: keeper(key, entry) };
  }
  return undefined;
}

/* The four answers of a read (contract section 4: X-Cache and RFC 9211 Cache-Status). */

const hit = (entry: CacheEntry, t: number): Cached => ({
  representation: entry,
  cacheStatus: 'HIT',
  cacheStatusParams: hitParams(entry.freshUntil, t),
});

const staleWhileRefreshing = (entry: CacheEntry, t: number): Cached => ({
  representation: entry,
  cacheStatus: 'STALE',
  // RFC 9211: a negative ttl is a stale answer; the refresh runs behind it.
  cacheStatusParams: `hit; ttl=${Math.floor((entry.freshUntil - t) / 1000)}`,
});

const miss = (representation: Representation, collapsed: boolean): Cached => ({
  representation,
  cacheStatus: 'MISS',
  cacheStatusParams: collapsed ? 'fwd=miss; collapsed' : 'fwd=miss; stored',
});

const staleOnFailure = (entry: CacheEntry, status: number): Cached => ({
  representation: entry,
  cacheStatus: 'STALE',
  cacheStatusParams: `fwd=stale; fwd-status=${status}`,
});

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

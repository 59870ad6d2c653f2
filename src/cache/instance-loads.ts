import type { CacheWindows } from '../../config/load-config.js';
import { releaseBody, type Representation } from './cache-entry.js';
import { RefreshedElsewhere, type FleetLoad, type Loaded } from './fleet-load.js';
import type { FlightClaim } from './flight-coordinator.js';

/** This instance's load of a key under way, or its wait for another instance's. */
interface InFlight {
  readonly loaded: Promise<Representation>;
  /** Whether it waits for another instance's load rather than loading here. */
  readonly waiting: () => boolean;
  /** A background refresh: it gives up (RefreshedElsewhere) when another holds the lock. */
  readonly background: boolean;
}

export interface InstanceLoads {
  /** The load for a key: this request's own (`collapsed` false), or one already under way. */
  once(
    key: string,
    windows: CacheWindows,
    load: () => Promise<Representation>,
    claim?: FlightClaim,
  ): { loaded: Promise<Representation>; collapsed: boolean };
  /** Refreshes a stale entry behind its answer, unless a load of the key is under way. */
  refresh(key: string, windows: CacheWindows, load: () => Promise<Representation>): void;
  /** Resolves when every load and cache write under way has settled (shutdown, tests). */
  settled(): Promise<void>;
}

/**
 * One load per key on this instance, over the fleet's single flight (fleet-load.ts). A key
 * leaves the map only after the store holds the result, and one Redis connection answers in
 * order, so a request whose read missed finds either the running load or the stored entry,
 * never neither. A load that waits for another instance can be overtaken by this instance's
 * own holder of the fleet lock (its admission reply came first, its request reached here
 * later): the holder then loads, and the waiter hears of it like any other waiter.
 */
export function createInstanceLoads(options: {
  fleetLoad: FleetLoad;
  /** Stores what a load brought; off the answer's path. */
  store(key: string, windows: CacheWindows, loaded: Loaded): Promise<void>;
  /** A background refresh failed (the stale entry stays). */
  refreshFailed(key: string, error: unknown): void;
}): InstanceLoads {
  const inflight = new Map<string, InFlight>();
  const writes = new Set<Promise<void>>();

  function start(
    key: string,
    windows: CacheWindows,
    load: () => Promise<Representation>,
    background: boolean,
    claim?: FlightClaim,
  ): Promise<Representation> {
    let waiting = claim?.state === 'busy';
    const outcome = options.fleetLoad(key, load, background, claim, () => (waiting = true));
    const loaded = outcome.then((o) => o.representation);
    const record: InFlight = { loaded, waiting: () => waiting, background };
    inflight.set(key, record);
    let made: Representation | undefined;
    const write = outcome
      .then((result) => {
        made = result.representation;
        return options.store(key, windows, result);
      })
      .catch(() => undefined)
      .finally(() => {
        if (inflight.get(key) === record) inflight.delete(key);
        writes.delete(write);
        // Every request that took this load took it before the key left the map, and took its
        // own hold on the body as the load answered it (takeRepresentation, in the same run of
        // promise jobs): once the event loop comes round to its immediates, the load's own
        // representation has no reader left.
        if (made !== undefined) setImmediate(releaseBody, made);
      });
    writes.add(write);
    return loaded;
  }

  return {
    once(key, windows, load, claim) {
      const running = inflight.get(key);
      if (running && !(running.waiting() && claim?.state === 'ours')) {
        if (!running.background) return { loaded: running.loaded, collapsed: true };
        // A refresh gives up when the lock is another's, which may be this very request's own
        // claim (its read found the entry gone, a stale read started the refresh): the request
        // then loads, or waits for the holder, as any miss does, never failing with it.
        const loaded = running.loaded.catch((error: unknown) => {
          if (!(error instanceof RefreshedElsewhere)) throw error;
          return start(key, windows, load, false, claim);
        });
        return { loaded, collapsed: true };
      }
      return { loaded: start(key, windows, load, false, claim), collapsed: false };
    },
    refresh(key, windows, load) {
      if (inflight.has(key)) return;
      start(key, windows, load, true).catch((error: unknown) => {
        if (!(error instanceof RefreshedElsewhere)) options.refreshFailed(key, error);
      });
    },
    async settled() {
      await Promise.allSettled([...[...inflight.values()].map((f) => f.loaded), ...writes]);
    },
  };
}

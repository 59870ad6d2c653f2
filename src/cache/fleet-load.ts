import type { CacheEntry, Representation } from './cache-entry.js';
import type { CacheStore } from './cache-store.js';
import type { Flight, FlightClaim, FlightCoordinator } from './flight-coordinator.js';

/** How a load ended: fetched here (and to be stored), or stored by another instance. */
export interface Loaded {
  representation: Representation;
  /** The lock to release once the entry is stored. */
  flight?: Flight;
  /** Read from the store, where another instance put it: nothing to store again. */
  fromStore?: true;
}

/** A background refresh another instance is already running. */
export class RefreshedElsewhere extends Error {}

export interface FleetLoadOptions {
  store: CacheStore;
  flights: FlightCoordinator;
  now: () => number;
  /** How long a miss waits for another instance's load of its key before loading itself. */
  flightWaitMs?: (key: string) => number;
  /**
   * Told when a wait ran out and this instance loads the key itself (a second upstream call
   * for it, as contract section 4 allows past the bound): what an operator looks for when
   * the upstream counts more than one call per key.
   */
  onWaitExpired?: (key: string, waitedMs: number) => void;
}

export type FleetLoad = (
  key: string,
  load: () => Promise<Representation>,
  background: boolean,
  claim: FlightClaim | undefined,
  onWait: () => void,
) => Promise<Loaded>;

/**
 * The fleet's single flight for a miss: the lock and this instance loads, or another
 * instance holds it and this one waits for its announcement and reads what it stored.
 * The lock comes from the admission read when it claimed one (no round trip of its own),
 * else from `acquire`. Waiting runs out after `flightWaitMs` (the holder died, or is slow),
 * and then this instance loads itself. A background refresh whose lock is taken is left to
 * the holder (RefreshedElsewhere). `onWait` is told when the load becomes a wait.
 */
export function createFleetLoad(options: FleetLoadOptions): FleetLoad {
  const { store, flights, now } = options;

  /** The stored entry for a key if it is fresh; a store that cannot say is a miss. */
  async function freshIn(key: string): Promise<CacheEntry | undefined> {
    const stored = await store.get(key).catch(() => undefined);
    return stored && now() < stored.freshUntil ? stored : undefined;
  }

  /** The lock for a load: the admission's claim, or one taken now; 'busy' when another holds it. */
  async function lockFor(
    key: string,
    claim: FlightClaim | undefined,
  ): Promise<Flight | 'busy' | Loaded> {
    if (claim?.state === 'ours') {
      claim.consumed = true;
      return flights.adopt(key, claim);
    }
    if (claim?.state === 'busy') return 'busy';
    const flight = await flights.acquire(key);
    // Another instance may have stored it between this one's read and its lock.
    if (flight !== 'busy' && flight.shared) {
      const stored = await freshIn(key);
      if (stored) {
        await flight.done();
        return { representation: stored, fromStore: true };
      }
    }
    return flight;
  }

  /** Waits for the holder's announcement, bounded; then what it stored, or a load of its own. */
  async function waitForHolder(key: string, load: () => Promise<Representation>): Promise<Loaded> {
    // Subscribed before the read, so the holder's announcement cannot slip in between.
    const wait = flights.wait(key);
    await wait.ready;
    const stored = await freshIn(key);
    if (stored) {
      wait.cancel();
      return { representation: stored, fromStore: true };
    }
    const waitMs = options.flightWaitMs?.(key) ?? 0;
    if (await wait.settled(waitMs)) {
      const announced = await freshIn(key);
      if (announced) return { representation: announced, fromStore: true };
    } else {
      options.onWaitExpired?.(key, waitMs);
    }
    return { representation: await load() };
  }

  return async (key, load, background, claim, onWait) => {
    const flight = await lockFor(key, claim);
    if (flight === 'busy') {
      if (background) throw new RefreshedElsewhere();
      onWait();
      return waitForHolder(key, load);
    }
    if ('representation' in flight) return flight;
    try {
      return { representation: await load(), flight };
    } catch (error) {
      await flight.done();
      throw error;
    }
  };
}

import type { CacheEntry } from './cache-entry.js';
import type { FlightRelease } from './flight-coordinator.js';

/**
 * Where entries live. Implementations never throw: a backend fault is a miss (get) or a
 * dropped write (set), reported through the logger they were built with.
 */
export interface CacheStore {
  readonly backend: 'redis' | 'memory';
  get(key: string): Promise<CacheEntry | undefined>;
  /**
   * Keeps the entry until `entry.errorUntil`. With `release`, the same call gives back the
   * fleet's lock on the key and tells its waiters (a store that is shared; others ignore it).
   */
  set(key: string, entry: CacheEntry, release?: FlightRelease): Promise<void>;
  /** For readiness: is the backend answering right now? */
  health(): { status: 'ok' | 'degraded'; detail?: string; bytes?: number };
}

import type { CacheEntry } from './cache-entry.js';
import type { MadeEncoding } from './encodings.js';
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
  /**
   * Keeps a compressed body made after the entry was stored (an answer in a coding the entry
   * lacked) with the entry under `key`, if that is still the same entry (same digest, stored
   * at the same moment) and has no body in that coding yet. Its windows and expiry stay.
   */
  addEncoding(key: string, entry: CacheEntry, made: MadeEncoding): Promise<void>;
  /** For readiness: is the backend answering right now? */
  health(): { status: 'ok' | 'degraded'; detail?: string; bytes?: number };
}

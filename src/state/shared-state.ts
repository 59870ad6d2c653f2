import type { Logger } from 'pino';
import type { CacheEntry } from '../cache/cache-entry.js';
import type { ClaimRequest, FlightClaim } from '../cache/flight-coordinator.js';

/** One fixed-window counter to bump. */
export interface CounterRequest {
  key: string;
  windowMs: number;
  /**
   * Counted only while this key exists (a live session's record): a forged or expired
   * session cookie creates no counter, so no state at all (contract section 6, Limits).
   */
  guard?: string;
}

/** A counter after the bump: `count` requests so far in a window that ends in `resetMs`. */
export interface Count {
  count: number;
  resetMs: number;
}

export interface CountAndRead {
  /** Same order as the requests; undefined where a guard was missing (nothing counted). */
  counts: (Count | undefined)[];
  /** The cache entry asked for; undefined when absent, corrupt or unreadable (a miss). */
  entry: CacheEntry | undefined;
  /** What became of the fleet lock the read was asked to claim, when it found no entry. */
  claim?: FlightClaim;
  /**
   * Set when the shared store could not count (unreachable, or out of memory): the counts are
   * this instance's own. A limit that must hold across the fleet (logins) fails closed on it.
   */
  unavailable?: true;
}

/**
 * The state requests share: rate-limit counters and cache entries. A cached read's whole
 * admission, counting its rate limits and reading its entry, is one call, which the Redis
 * implementation makes one round trip. Never throws: a backend fault counts in process
 * (each instance still enforces the limit) and reads as a miss. `log` is the request's logger,
 * so a warning names the request it happened in.
 */
export interface SharedState {
  countAndRead(
    counters: readonly CounterRequest[],
    read?: string,
    log?: Logger,
    /** Take the fleet's lock on `read` in the same call if no entry is found (a miss). */
    claim?: ClaimRequest,
  ): Promise<CountAndRead>;
  /**
   * Takes one back from each counter, never below zero (an attempt that turned out not to
   * count: a login that succeeded). Never throws; where Redis cannot, this process's floor is
   * lowered instead.
   */
  uncount(counters: readonly CounterRequest[], log?: Logger): Promise<void>;
}

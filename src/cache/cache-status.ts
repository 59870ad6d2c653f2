export type CacheStatus = 'HIT' | 'MISS' | 'STALE';

/** How a cached answer was made, in RFC 9211 terms (contract section 4). */
export interface CacheOutcome {
  readonly cacheStatus: CacheStatus;
  /** The parameters after `bff; ` in `Cache-Status`, e.g. `hit; ttl=42` or `fwd=miss; stored`. */
  readonly cacheStatusParams: string;
}

/** `Cache-Status` parameters of a fresh hit: seconds of freshness left. */
export function hitParams(freshUntil: number, now: number): string {
  return `hit; ttl=${Math.max(0, Math.floor((freshUntil - now) / 1000))}`;
}

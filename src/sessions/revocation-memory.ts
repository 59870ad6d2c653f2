/**
 * The sessions this instance knows were ended (logout, rotation, SESSION_MAX_PER_USER), each
 * until its absolute expiry: after it, the session is dead anyway (contract section 7, Logout
 * is final across a failover). Bounded in count: when full, entries past their expiry go
 * first, then the longest remembered. An id hash of 43 characters and its expiry take about
 * 120 bytes of heap here (117 measured at 100,000 entries).
 */
export interface RevocationMemory {
  /** Remembers `idHash` as ended until `until` (epoch ms); nothing when that has passed. */
  remember(idHash: string, until: number): void;
  /** Whether `idHash` was ended and its expiry has not passed. */
  has(idHash: string): boolean;
  /** The id hashes remembered and not yet expired. */
  live(): string[];
  /** Drops the entries whose expiry has passed. */
  sweep(): void;
  readonly size: number;
  /** Entries dropped before their expiry because the memory was full, since the start. */
  readonly forgotten: number;
}

export function createRevocationMemory(options: {
  maxEntries: number;
  now?: () => number;
}): RevocationMemory {
  const now = options.now ?? Date.now;
  /** Insertion order is the order of revocation: the first entry is the longest remembered. */
  const until = new Map<string, number>();
  let forgotten = 0;
  let sweptAt = -Infinity;

  const sweep = () => {
    const t = now();
    sweptAt = t;
    for (const [idHash, expiry] of until) if (expiry <= t) until.delete(idHash);
  };

  return {
    remember(idHash, expiry) {
      if (expiry <= now() || options.maxEntries <= 0) return;
      // Re-inserted, so a revocation heard again (the fleet's broadcast) counts as recent.
      until.delete(idHash);
      // A full memory looks for expired entries at most once a second, not on every insert.
      if (until.size >= options.maxEntries && now() - sweptAt >= 1000) sweep();
      while (until.size >= options.maxEntries) {
        const oldest = until.keys().next().value as string;
        until.delete(oldest);
        forgotten += 1;
      }
      until.set(idHash, expiry);
    },
    has(idHash) {
      const expiry = until.get(idHash);
      if (expiry === undefined) return false;
      if (expiry > now()) return true;
      until.delete(idHash);
      return false;
    },
    live() {
      const t = now();
      return [...until].filter(([, expiry]) => expiry > t).map(([idHash]) => idHash);
    },
    sweep,
    get size() {
      return until.size;
    },
    get forgotten() {
      return forgotten;
    },
  };
}

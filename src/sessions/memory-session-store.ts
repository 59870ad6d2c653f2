import { LRUCache } from 'lru-cache';
import type { SessionStore, StoredSession } from './session-store.js';

/** In-process sessions for a single instance without Redis; they end when the process does. */
export function createMemorySessionStore(
  options: { maxSessions?: number; now?: () => number } = {},
): SessionStore & { has(recordKey: string): boolean } {
  const now = options.now ?? Date.now;
  const sessions = new LRUCache<string, StoredSession>({ max: options.maxSessions ?? 100_000 });
  return {
    backend: 'memory',
    recordKey: (idHash) => idHash,
    has: (recordKey) => {
      const session = sessions.peek(recordKey);
      const t = now();
      return session !== undefined && session.idleExpiresAt > t && session.absoluteExpiresAt > t;
    },
    get(idHash) {
      const session = sessions.get(idHash);
      const t = now();
      if (session && (session.idleExpiresAt <= t || session.absoluteExpiresAt <= t)) {
        sessions.delete(idHash);
        return Promise.resolve(undefined);
      }
      return Promise.resolve(session);
    },
    set(idHash, session) {
      sessions.set(idHash, session);
      return Promise.resolve();
    },
    delete(idHash) {
      sessions.delete(idHash);
      return Promise.resolve();
    },
  };
}

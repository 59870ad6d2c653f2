import { AppError } from '../errors/app-error.js';
import type { SessionStore, StoredSession } from './session-store.js';

/**
 * In-process sessions for a single instance without Redis; they end when the process does.
 * Bounded in number (SESSION_MEMORY_MAX): at the cap, expired sessions are swept, and if none
 * was expired a new login is refused with 503. A live session is never evicted to make room,
 * so nobody is logged out by somebody else's login (contract section 1, CACHE_MAX_BYTES).
 */
export function createMemorySessionStore(
  options: { maxSessions?: number; now?: () => number } = {},
): SessionStore & { has(recordKey: string): boolean } {
  const now = options.now ?? Date.now;
  const max = options.maxSessions ?? 10_000;
  const sessions = new Map<string, StoredSession>();
  const live = (session: StoredSession | undefined, t = now()): session is StoredSession =>
    session !== undefined && session.idleExpiresAt > t && session.absoluteExpiresAt > t;
  const sweep = () => {
    const t = now();
    for (const [idHash, session] of sessions) if (!live(session, t)) sessions.delete(idHash);
  };
  return {
    backend: 'memory',
    recordKey: (idHash) => idHash,
    has: (recordKey) => live(sessions.get(recordKey)),
    get(idHash) {
      const session = sessions.get(idHash);
      if (session !== undefined && !live(session)) {
        sessions.delete(idHash);
        return Promise.resolve(undefined);
      }
      return Promise.resolve(session);
    },
    set(idHash, session) {
      if (!sessions.has(idHash) && sessions.size >= max) sweep();
      if (!sessions.has(idHash) && sessions.size >= max) {
        return Promise.reject(
          new AppError(
            'SERVICE_UNAVAILABLE',
            'No more sessions can be opened right now; try again later.',
            {
              retryAfterSeconds: 60,
            },
          ),
        );
      }
      sessions.set(idHash, session);
      return Promise.resolve();
    },
    refresh(idHash, session) {
      if (live(sessions.get(idHash))) sessions.set(idHash, session);
      return Promise.resolve();
    },
    exists: (idHash) => Promise.resolve(live(sessions.get(idHash))),
    delete(idHash) {
      sessions.delete(idHash);
      return Promise.resolve();
    },
  };
}

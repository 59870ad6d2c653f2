import { AppError } from '../errors/app-error.js';
import type { SessionStore, StoredSession } from './session-store.js';

export interface MemorySessionStoreOptions {
  /** SESSION_MEMORY_MAX: sessions held at once. */
  maxSessions?: number;
  /** SESSION_MAX_PER_USER: live sessions one chat user may hold. */
  maxPerUser?: number;
  now?: () => number;
}

/**
 * In-process sessions for a single instance without Redis; they end when the process does.
 * Bounded in number (SESSION_MEMORY_MAX): at the cap, expired sessions are swept, and if none
 * was expired a new login is refused with 503. A live session is never evicted to make room for
 * somebody else's, so nobody is logged out by another user's login (contract section 1,
 * CACHE_MAX_BYTES); and no user holds more than SESSION_MAX_PER_USER, their own oldest ending
 * first, so one account logging in again and again cannot fill the cap (contract section 7,
 * Quotas per caller).
 */
export function createMemorySessionStore(
  options: MemorySessionStoreOptions = {},
): SessionStore & { has(recordKey: string): boolean } {
  const now = options.now ?? Date.now;
  const max = options.maxSessions ?? 10_000;
  const maxPerUser = options.maxPerUser ?? 10;
  const sessions = new Map<string, StoredSession>();
  /** Each user's sessions in the order they were created (one process, one clock). */
  const byUser = new Map<number, Set<string>>();
  const live = (session: StoredSession | undefined, t = now()): session is StoredSession =>
    session !== undefined && session.idleExpiresAt > t && session.absoluteExpiresAt > t;
  /** Drops a session and its place in its user's list; whether it was live. */
  const forget = (idHash: string): boolean => {
    const session = sessions.get(idHash);
    if (session === undefined) return false;
    sessions.delete(idHash);
    const own = byUser.get(session.userId);
    own?.delete(idHash);
    if (own?.size === 0) byUser.delete(session.userId);
    return live(session);
  };
  const sweep = () => {
    const t = now();
    for (const [idHash, session] of sessions) if (!live(session, t)) forget(idHash);
  };
  /** Ends the user's oldest live sessions until one more fits under the limit. */
  const makeRoomFor = (userId: number): string[] => {
    const own = byUser.get(userId);
    if (own === undefined) return [];
    const ended: string[] = [];
    // A Set iterates in insertion order and tolerates deletion of the current element.
    for (const idHash of own) if (!live(sessions.get(idHash))) forget(idHash);
    for (const idHash of own) {
      if (own.size < maxPerUser) break;
      forget(idHash);
      ended.push(idHash);
    }
    return ended;
  };
  return {
    backend: 'memory',
    recordKey: (idHash) => idHash,
    has: (recordKey) => live(sessions.get(recordKey)),
    get(idHash) {
      const session = sessions.get(idHash);
      if (session !== undefined && !live(session)) {
        forget(idHash);
        return Promise.resolve(undefined);
      }
      return Promise.resolve(session);
    },
    create(idHash, session) {
      // The user's own oldest make room first: at the cap, their login then fits without a 503.
      const ended = makeRoomFor(session.userId);
      if (sessions.size >= max) sweep();
      if (sessions.size >= max) {
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
      let own = byUser.get(session.userId);
      if (own === undefined) byUser.set(session.userId, (own = new Set()));
      own.add(idHash);
      return Promise.resolve(ended);
    },
    refresh(idHash, session) {
      if (live(sessions.get(idHash))) sessions.set(idHash, session);
      return Promise.resolve();
    },
    exists: (idHash) => Promise.resolve(live(sessions.get(idHash))),
    delete: (idHash) => Promise.resolve(forget(idHash)),
  };
}

import { createHash, randomBytes } from 'node:crypto';
import type { ChatCredentials } from '../upstreams/chat/chat-client.js';
import type { SessionSealer } from './session-crypto.js';
import type { SessionStore, StoredSession } from './session-store.js';

export interface SessionProfile {
  userId: number;
  email: string;
  fullName: string;
  role: number | undefined;
}

export interface Session {
  profile: SessionProfile;
  credentials: ChatCredentials;
  createdAt: number;
  absoluteExpiresAt: number;
  idleExpiresAt: number;
}

/**
 * Why the gateway ended a session: a logout, a login that replaced the browser's session
 * (rotation), a login past SESSION_MAX_PER_USER, or a key the chat server no longer accepts.
 */
export type SessionEndReason = 'logout' | 'rotation' | 'user_limit' | 'refused';

export interface SessionManager {
  /**
   * A new session with a fresh id (login always rotates the id). `replacing` is the session the
   * browser had, ended first (rotation), so that it holds no place under SESSION_MAX_PER_USER;
   * past that limit, the user's oldest sessions end (contract section 7, Quotas per caller).
   */
  create(
    profile: SessionProfile,
    credentials: ChatCredentials,
    options?: { replacing?: string | undefined },
  ): Promise<{ id: string; session: Session }>;
  /** The live session for an id, sliding its idle expiry; undefined when unknown or expired. */
  lookup(id: string): Promise<Session | undefined>;
  /** Ends a session for good on every instance (contract section 7). */
  destroy(id: string, reason: Exclude<SessionEndReason, 'user_limit'>): Promise<void>;
  /**
   * Which of these sessions still exist, without sliding their idle expiry: what an open event
   * stream checks, since it is not activity that keeps a session alive (contract section 2.2).
   */
  alive(ids: readonly string[]): Promise<boolean[]>;
  /**
   * What identifies a well-formed cookie's session without reading it: the hash the store
   * knows it by, and the key its record lives under (undefined for a malformed id).
   */
  identify(id: string): { idHash: string; recordKey: string } | undefined;
  /** Live sessions this instance ended, by reason (`gateway_sessions_ended_total`). */
  readonly ended: Readonly<Record<SessionEndReason, number>>;
}

export interface SessionManagerOptions {
  store: SessionStore;
  sealer: SessionSealer;
  idleTimeoutSeconds: number;
  absoluteTimeoutSeconds: number;
  now?: () => number;
}

/** 256 random bits, base64url: what the cookie carries. */
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

/** The store never sees ids, only their hashes: a store dump cannot be replayed as cookies. */
const hashOf = (id: string) => createHash('sha256').update(id).digest('base64url');

export function createSessionManager(options: SessionManagerOptions): SessionManager {
  const { store, sealer } = options;
  const now = options.now ?? Date.now;
  const idleMs = options.idleTimeoutSeconds * 1000;
  // Writing back every request would cost a Redis write per call; a minute of slack is enough.
  const touchEveryMs = Math.min(60_000, idleMs / 10);
  const ended: Record<SessionEndReason, number> = {
    logout: 0,
    rotation: 0,
    user_limit: 0,
    refused: 0,
  };

  async function destroy(id: string, reason: SessionEndReason) {
    if (SESSION_ID.test(id) && (await store.delete(hashOf(id)))) ended[reason] += 1;
  }

  function toSession(stored: StoredSession, apiKey: string): Session {
    return {
      profile: {
        userId: stored.userId,
        email: stored.email,
        fullName: stored.fullName,
        role: stored.role,
      },
      credentials: { email: stored.email, apiKey },
      createdAt: stored.createdAt,
      absoluteExpiresAt: stored.absoluteExpiresAt,
      idleExpiresAt: stored.idleExpiresAt,
    };
  }

  return {
    async create(profile, credentials, { replacing } = {}) {
      if (replacing !== undefined) await destroy(replacing, 'rotation');
      const id = randomBytes(32).toString('base64url');
      const idHash = hashOf(id);
      const t = now();
      const stored: StoredSession = {
        v: 1,
        userId: profile.userId,
        email: credentials.email,
        fullName: profile.fullName,
        ...(profile.role === undefined ? {} : { role: profile.role }),
        sealedApiKey: sealer.seal(credentials.apiKey, idHash),
        createdAt: t,
        absoluteExpiresAt: t + options.absoluteTimeoutSeconds * 1000,
        idleExpiresAt: t + idleMs,
      };
      ended.user_limit += (await store.create(idHash, stored)).length;
      return { id, session: toSession(stored, credentials.apiKey) };
    },
    async lookup(id) {
      if (!SESSION_ID.test(id)) return undefined;
      const idHash = hashOf(id);
      const stored = await store.get(idHash);
      const t = now();
      if (!stored || stored.idleExpiresAt <= t || stored.absoluteExpiresAt <= t) return undefined;
      const apiKey = sealer.open(stored.sealedApiKey, idHash);
      if (apiKey === undefined) return undefined;
      let current = stored;
      if (t + idleMs - stored.idleExpiresAt >= touchEveryMs) {
        current = { ...stored, idleExpiresAt: Math.min(t + idleMs, stored.absoluteExpiresAt) };
        // Off the request's path, and not fatal: a store that cannot write right now (a Redis
        // out of memory) leaves the session at its previous idle expiry, still logged in.
        store.refresh(idHash, current).catch(() => undefined);
      }
      return toSession(current, apiKey);
    },
    alive(ids) {
      return Promise.all(
        ids.map((id) => (SESSION_ID.test(id) ? store.exists(hashOf(id)) : Promise.resolve(false))),
      );
    },
    destroy,
    identify(id) {
      if (!SESSION_ID.test(id)) return undefined;
      const idHash = hashOf(id);
      return { idHash, recordKey: store.recordKey(idHash) };
    },
    ended,
  };
}

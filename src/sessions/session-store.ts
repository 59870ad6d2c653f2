import { z } from 'zod';

/** A session as stored: the API key sealed (session-crypto.ts), timestamps in epoch ms. */
export const StoredSession = z.strictObject({
  v: z.literal(1),
  userId: z.number().int(),
  email: z.string(),
  fullName: z.string(),
  role: z.number().int().optional(),
  sealedApiKey: z.string(),
  createdAt: z.number().int(),
  absoluteExpiresAt: z.number().int(),
  idleExpiresAt: z.number().int(),
});
export type StoredSession = z.infer<typeof StoredSession>;

/**
 * Where sessions live, keyed by a hash of the session id (never the id itself). Unlike the
 * cache, a session store fails closed: a backend fault throws SERVICE_UNAVAILABLE rather than
 * pretending nobody is logged in.
 */
export interface SessionStore {
  readonly backend: 'redis' | 'memory';
  /**
   * The key this session's record lives under. A rate-limit counter guarded by it exists only
   * while the session does, so a forged cookie leaves no trace (contract section 6, Limits).
   */
  recordKey(idHash: string): string;
  get(idHash: string): Promise<StoredSession | undefined>;
  /**
   * Keeps a new session until `session.idleExpiresAt` (or its absolute expiry, if sooner). When
   * its user would then hold more than SESSION_MAX_PER_USER live sessions, that user's oldest by
   * creation are ended first, as a logout would end them (contract section 7, Quotas per
   * caller): resolves to the id hashes of the sessions it ended.
   */
  create(idHash: string, session: StoredSession): Promise<readonly string[]>;
  /**
   * Writes a newer copy of a session that still exists, and nothing otherwise: a logout,
   * rotation or expiry that came in between wins (contract section 6: a session that ended
   * never comes back, whatever was in flight).
   */
  refresh(idHash: string, session: StoredSession): Promise<void>;
  /**
   * Ends a session (logout, rotation) for good, on every instance (contract section 7, Logout
   * is final across a failover); resolves to whether a live session was ended.
   */
  delete(idHash: string): Promise<boolean>;
  /** Whether the session still exists, without reading or sliding it (an open event stream). */
  exists(idHash: string): Promise<boolean>;
}

import type { Session } from '../../sessions/session-manager.js';

/**
 * What the browser may know of its session (`GET /api/auth/session`, and the `session` part
 * of `/api/bootstrap`): who, and until when. Never the credentials.
 */
export function describeSession(session: Session) {
  return {
    user: {
      user_id: session.profile.userId,
      email: session.profile.email,
      full_name: session.profile.fullName,
      role: session.profile.role ?? null,
    },
    created_at: new Date(session.createdAt).toISOString(),
    idle_expires_at: new Date(session.idleExpiresAt).toISOString(),
    expires_at: new Date(session.absoluteExpiresAt).toISOString(),
  };
}
export type SessionDescription = ReturnType<typeof describeSession>;

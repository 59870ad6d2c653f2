import { z } from 'zod';
import type { Session } from '../../sessions/session-manager.js';

/** What the browser may know of its session: who, and until when. Never the credentials. */
export const SessionDescription = z.object({
  user: z.object({
    user_id: z.number().int(),
    email: z.string(),
    full_name: z.string(),
    role: z.number().int().nullable(),
  }),
  created_at: z.string().meta({ format: 'date-time' }),
  idle_expires_at: z.string().meta({ format: 'date-time' }),
  expires_at: z.string().meta({ format: 'date-time' }),
});
export type SessionDescription = z.infer<typeof SessionDescription>;

/** The body of `GET /api/auth/session` and the `session` part of `/api/bootstrap`. */
export function describeSession(session: Session): SessionDescription {
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

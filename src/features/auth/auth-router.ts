import { Router } from 'express';
import { AppError, isAppError } from '../../errors/app-error.js';
import type { AttemptLimit } from '../../http/rate-limits.js';
import { mountRoute } from '../../http/route-spec.js';
import type { SessionCookie } from '../../http/session-cookie.js';
import type { SessionManager } from '../../sessions/session-manager.js';
import { describeSession as describe } from './describe-session.js';
import { ROUTES } from '../route-table.js';
import type { AuthService } from './auth-service.js';

export interface AuthRouterOptions {
  service: AuthService;
  sessions: SessionManager;
  cookie: SessionCookie;
  /** The stricter limit on failed login attempts. */
  loginLimit: AttemptLimit;
}

/** `/api/auth/...` (contract section 2), mounted in session mode only. */
export function createAuthRouter(options: AuthRouterOptions): Router {
  const { service, sessions, cookie } = options;
  const router = Router();

  mountRoute(router, ROUTES.login, async (req, res, { body: input }) => {
    const attempt = await options.loginLimit.begin(req, res);
    // Rotation: whatever session this browser had is ended, and the new one gets a new id. It
    // ends before the new one is stored, so it holds no place under SESSION_MAX_PER_USER.
    const previous = cookie.read(req);
    let opened;
    try {
      opened = await service.login(input, req.id, previous);
    } catch (error) {
      // Refused credentials stay counted against the client; nothing else does.
      if (!isAppError(error) || error.code !== 'UNAUTHORIZED') await attempt.forgive();
      throw error;
    }
    await attempt.forgive();
    const { id, session } = opened;
    cookie.set(res, id);
    res.set('Cache-Control', 'no-store').json(describe(session));
  });

  mountRoute(router, ROUTES.logout, async (req, res) => {
    const id = cookie.read(req);
    if (id !== undefined) await sessions.destroy(id, 'logout');
    cookie.clear(res);
    res.status(204).end();
  });

  mountRoute(router, ROUTES.session, async (req, res) => {
    const id = cookie.read(req);
    const session = id === undefined ? undefined : await sessions.lookup(id);
    if (!session) {
      if (id !== undefined) cookie.clear(res);
      throw new AppError('UNAUTHORIZED', 'Nobody is logged in.');
    }
    res.set('Cache-Control', 'no-store').json(describe(session));
  });

  return router;
}

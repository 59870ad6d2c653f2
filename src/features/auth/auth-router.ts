import { Router } from 'express';
import { AppError, isAppError } from '../../errors/app-error.js';
import type { AttemptLimit } from '../../http/rate-limits.js';
import type { SessionCookie } from '../../http/session-cookie.js';
import type { RouteGuard } from '../../http/route-mount.js';
import type { Session, SessionManager } from '../../sessions/session-manager.js';
import { describeSession as describe } from './describe-session.js';
import type { FeatureMounter } from '../route-guards.js';
import { ROUTES } from '../route-table.js';
import type { AuthService } from './auth-service.js';

export interface AuthRouterOptions {
  service: AuthService;
  sessions: SessionManager;
  cookie: SessionCookie;
  /** The stricter limit on failed login attempts. */
  loginLimit: AttemptLimit;
  mounter: FeatureMounter;
}

/** `/api/auth/...` (contract section 2), mounted in session mode only. */
export function createAuthRouter(options: AuthRouterOptions): Router {
  const { service, sessions, cookie } = options;
  const router = Router();

  options.mounter.mount(router, ROUTES.login, async (req, res, { body: input }) => {
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

  options.mounter.mount(router, ROUTES.logout, async (req, res) => {
    const id = cookie.read(req);
    if (id !== undefined) await sessions.destroy(id, 'logout');
    cookie.clear(res);
    res.status(204).end();
  });

  // The route's guard answers 401 when nobody is logged in.
  options.mounter.mount(router, ROUTES.session, (_req, res, { caller: session }) => {
    res.set('Cache-Control', 'no-store').json(describe(session));
  });

  return router;
}

/** The `session` guard of the route table: the browser's live session, 401 without one. */
export function createSessionGuard(options: {
  sessions: SessionManager;
  cookie: SessionCookie;
}): RouteGuard<Session> {
  const { sessions, cookie } = options;
  return {
    async peek(req) {
      const id = cookie.read(req);
      return id === undefined ? undefined : sessions.lookup(id);
    },
    refuse(req, res) {
      if (cookie.read(req) !== undefined) cookie.clear(res);
      return new AppError('UNAUTHORIZED', 'Nobody is logged in.');
    },
    owner: (session) => String(session.profile.userId),
    run: (_req, _res, _session, work) => work(),
  };
}

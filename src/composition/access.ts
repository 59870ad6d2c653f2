import { randomBytes } from 'node:crypto';
import { compileTrust, type TrustFunction } from '../http/client-address.js';
import { createRateLimits, type RateLimits } from '../http/rate-limits.js';
import { createSessionCookie, type SessionCookie } from '../http/session-cookie.js';
import { secretOrEphemeral } from '../security/secret-or-ephemeral.js';
import { createSessionSealer } from '../sessions/session-crypto.js';
import { createSessionManager, type SessionManager } from '../sessions/session-manager.js';
import type { SessionStore } from '../sessions/session-store.js';
import type { Wiring } from './wiring.js';

/** Who is calling: the session and its cookie, the proxies trusted, the rate limits. */
export interface GatewayAccess {
  sessionMode: boolean;
  cookie: SessionCookie;
  sessions: SessionManager;
  trust: TrustFunction;
  limits: RateLimits;
}

export function createGatewayAccess(
  options: Pick<Wiring, 'config' | 'logger' | 'now'> & { store: SessionStore },
): GatewayAccess {
  const { config, logger, now, store } = options;
  const cookie = createSessionCookie({
    secure: config.session.cookieSecure,
    sameSite: config.session.sameSite,
    maxAgeSeconds: config.session.absoluteTimeoutSeconds,
  });
  const sessionMode = config.chat.authMode === 'session';
  const sessions = createSessionManager({
    store,
    // Service mode never opens a session: no key to configure, nothing to warn about.
    sealer: createSessionSealer(
      sessionMode
        ? secretOrEphemeral(config.session.secret, 'SESSION_SECRET', logger)
        : randomBytes(32),
    ),
    idleTimeoutSeconds: config.session.idleTimeoutSeconds,
    absoluteTimeoutSeconds: config.session.absoluteTimeoutSeconds,
    now,
  });
  const trust = compileTrust(config.trustProxy);
  const limits = createRateLimits({
    limits: config.rateLimit,
    trust,
    sessions,
    sessionOf: (req) => cookie.read(req),
  });
  return { sessionMode, cookie, sessions, trust, limits };
}

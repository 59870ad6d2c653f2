import type { Router } from 'express';
import type { AttemptLimit } from '../../http/rate-limits.js';
import type { SessionCookie } from '../../http/session-cookie.js';
import type { SessionManager } from '../../sessions/session-manager.js';
import type { ChatClient } from '../../upstreams/chat/chat-client.js';
import type { FeatureMounter } from '../route-guards.js';
import { createAuthRouter } from './auth-router.js';
import { createAuthService } from './auth-service.js';

/**
 * Login, logout and the session, in session mode (contract section 2): the chat server checks
 * the credentials, the gateway keeps them in a server-side session.
 */
export function createAuthFeature(options: {
  chat: ChatClient;
  sessions: SessionManager;
  cookie: SessionCookie;
  loginLimit: AttemptLimit;
  mounter: FeatureMounter;
}): Router {
  return createAuthRouter({
    service: createAuthService({ chat: options.chat, sessions: options.sessions }),
    sessions: options.sessions,
    cookie: options.cookie,
    loginLimit: options.loginLimit,
    mounter: options.mounter,
  });
}

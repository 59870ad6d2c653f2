import type { Router } from 'express';
import type { SessionCookie } from '../../http/session-cookie.js';
import type { SessionManager } from '../../sessions/session-manager.js';
import type { ChatCredentials } from '../../upstreams/chat/chat-client.js';
import type { SearchStatus } from '../../upstreams/search/search-status.js';
import { describeSession } from '../auth/describe-session.js';
import type { ChatService } from '../chat/chat-service.js';
import type { FeatureMounter } from '../route-guards.js';
import { createBootstrapRouter } from './bootstrap-router.js';

/**
 * `GET /api/bootstrap` from the gateway's parts: in service mode the first screen names the
 * account every chat call uses; in session mode it is the logged-in user's, or empty.
 */
export function createBootstrapFeature(options: {
  chat: ChatService;
  /** Set in service mode. */
  serviceAccount: ChatCredentials | undefined;
  sessions: SessionManager;
  cookie: SessionCookie;
  searchStatus: SearchStatus;
  deadlineMs: number;
  mounter: FeatureMounter;
}): Router {
  const { serviceAccount, sessions, cookie } = options;
  return createBootstrapRouter({
    chat: options.chat,
    searchStatus: options.searchStatus,
    deadlineMs: options.deadlineMs,
    mounter: options.mounter,
    async identify(req, res) {
      if (serviceAccount) {
        return {
          session: { mode: 'service', user: { email: serviceAccount.email } },
          credentials: serviceAccount,
        };
      }
      const id = cookie.read(req);
      const session = id === undefined ? undefined : await sessions.lookup(id);
      if (!session) {
        if (id !== undefined) cookie.clear(res);
        return undefined;
      }
      return { session: describeSession(session), credentials: session.credentials };
    },
  });
}

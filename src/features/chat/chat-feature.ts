import type { RequestHandler, Router } from 'express';
import type { Dispatcher } from 'undici';
import type { Config } from '../../../config/load-config.js';
import type { CachedLoader } from '../../cache/cached-loader.js';
import type { SessionCookie } from '../../http/session-cookie.js';
import type { SessionManager } from '../../sessions/session-manager.js';
import type { Breaker } from '../../upstreams/http/circuit-breaker.js';
import { createChatClient } from '../../upstreams/chat/chat-client.js';
import { createAuthRouter } from '../auth/auth-router.js';
import { createAuthService } from '../auth/auth-service.js';
import { createServiceCredentials, createSessionCredentials } from './chat-credentials.js';
import { createChatRouter } from './chat-router.js';
import { createChatService } from './chat-service.js';

export interface ChatFeatureOptions {
  config: Config;
  pool: Dispatcher;
  breaker: Breaker;
  loader: CachedLoader;
  sessions: SessionManager;
  cookie: SessionCookie;
  loginLimit: RequestHandler;
}

/**
 * The chat routes, and in session mode the auth routes, from configuration. In service mode
 * there is no login: `/api/auth/*` is not mounted and every call uses the service account.
 */
export function createChatFeature(options: ChatFeatureOptions): Record<string, Router> {
  const { chat } = options.config;
  const client = createChatClient({
    pool: options.pool,
    breaker: options.breaker,
    basePath: new URL(chat.baseUrl).pathname.replace(/\/$/, ''),
    deadlineMs: chat.timeoutMs,
    writeDeadlineMs: chat.writeTimeoutMs,
  });
  const service = createChatService({
    client,
    loader: options.loader,
    realm: chat.baseUrl,
    channelFoldersCache: chat.channelFoldersCache,
  });
  if (chat.authMode === 'service' && chat.email !== undefined && chat.apiKey !== undefined) {
    const credentials = createServiceCredentials({ email: chat.email, apiKey: chat.apiKey });
    return { '/api/chat': createChatRouter({ service, credentials }) };
  }
  const { sessions, cookie } = options;
  return {
    '/api/auth': createAuthRouter({
      service: createAuthService({ chat: client, sessions }),
      sessions,
      cookie,
      loginLimit: options.loginLimit,
    }),
    '/api/chat': createChatRouter({
      service,
      credentials: createSessionCredentials({ sessions, cookie }),
    }),
  };
}

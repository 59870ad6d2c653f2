import type { Express } from 'express';
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import type { Config } from '../config/load-config.js';
import { createApp } from './app.js';
import { createCachedLoader, type CachedLoader } from './cache/cached-loader.js';
import type { CacheStore } from './cache/cache-store.js';
import { createSearchCursorCodecFromConfig } from './features/search/search-cursor-config.js';
import { createSearchQuerySchema } from './features/search/search-query.js';
import { createSearchRedirectProxy } from './features/search/search-redirect-proxy.js';
import { createSearchRouter } from './features/search/search-router.js';
import { createSearchService } from './features/search/search-service.js';
import { createRedirectUrlMatcher } from './features/search/rp-param.js';
import { createReadiness, type Readiness } from './health/readiness.js';
import { createSearchClient } from './upstreams/search/search-client.js';
import { createChatClient } from './upstreams/chat/chat-client.js';
import {
  createNoSessionCredentials,
  createServiceCredentials,
  type ChatCredentialsResolver,
} from './features/chat/chat-credentials.js';
import { createChatRouter } from './features/chat/chat-router.js';
import { createChatService } from './features/chat/chat-service.js';

/** What the composition root has built and opened; everything below is pure wiring. */
export interface GatewayParts {
  config: Config;
  logger: Logger;
  store: CacheStore;
  searchPool: Dispatcher;
  chatPool: Dispatcher;
}

export interface Gateway {
  app: Express;
  loader: CachedLoader;
  readiness: Readiness;
}

function chatCredentials(config: Config): ChatCredentialsResolver {
  const { authMode, email, apiKey } = config.chat;
  // loadConfig guarantees both in service mode.
  return authMode === 'service' && email !== undefined && apiKey !== undefined
    ? createServiceCredentials({ email, apiKey })
    : createNoSessionCredentials();
}

/** Wires clients, cache, services and routers into an app; opens nothing. */
export function createGateway(parts: GatewayParts): Gateway {
  const { config, logger, store } = parts;
  const loader = createCachedLoader({ store, logger });
  const readiness = createReadiness([
    { name: 'cache', check: () => ({ backend: store.backend, ...store.health() }) },
  ]);

  const searchPath = '/api/search';
  const searchService = createSearchService({
    client: createSearchClient({
      pool: parts.searchPool,
      basePath: new URL(config.search.baseUrl).pathname.replace(/\/$/, ''),
      clientToken: config.search.clientToken,
      deadlineMs: config.search.timeoutMs,
    }),
    loader,
    cursors: createSearchCursorCodecFromConfig(config, logger),
    isRedirectUrl: createRedirectUrlMatcher(config.search.baseUrl),
    windows: config.search.cache,
    routePath: searchPath,
  });

  const chatService = createChatService({
    client: createChatClient({
      pool: parts.chatPool,
      basePath: new URL(config.chat.baseUrl).pathname.replace(/\/$/, ''),
      deadlineMs: config.chat.timeoutMs,
    }),
    loader,
    realm: config.chat.baseUrl,
    channelFoldersCache: config.chat.channelFoldersCache,
  });

  const app = createApp({
    logger,
    readiness,
    corsOrigins: config.corsOrigins,
    bodyLimitBytes: config.bodyLimitBytes,
    routers: {
      '/api/chat': createChatRouter({ service: chatService, credentials: chatCredentials(config) }),
      [searchPath]: createSearchRouter({
        service: searchService,
        querySchema: createSearchQuerySchema(config.search.maxK),
        redirectProxy: createSearchRedirectProxy({
          searchBaseUrl: config.search.baseUrl,
          deadlineMs: config.search.timeoutMs,
        }),
      }),
    },
  });
  return { app, loader, readiness };
}

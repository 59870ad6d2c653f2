import { parse as parseQuery } from 'node:querystring';
import type { Router } from 'express';
import type { Config } from '../../../config/load-config.js';
import type { CachedLoader } from '../../cache/cached-loader.js';
import { parseWith } from '../../errors/parse-with.js';
import type { CachedRoute } from '../../http/hit-path.js';
import type { ChatClient } from '../../upstreams/chat/chat-client.js';
import { ROUTES } from '../route-table.js';
import type { ChatCredentialsResolver } from './chat-credentials.js';
import { ChannelFoldersQuery } from './chat-inputs.js';
import { createChatRouter } from './chat-router.js';
import { createChatService, type ChatService } from './chat-service.js';

export interface ChatFeature {
  router: Router;
  service: ChatService;
  /**
   * Channel folders for the hit path, in service mode only: in session mode a hit still needs
   * the caller's session, which the router resolves.
   */
  cachedRoutes: CachedRoute[];
}

/** The chat routes: every call made with the credentials the resolver gives for the caller. */
export function createChatFeature(options: {
  config: Config;
  client: ChatClient;
  loader: CachedLoader;
  credentials: ChatCredentialsResolver;
}): ChatFeature {
  const { chat } = options.config;
  const service = createChatService({
    client: options.client,
    loader: options.loader,
    realm: chat.baseUrl,
    channelFoldersCache: chat.channelFoldersCache,
  });
  const cachedRoutes: CachedRoute[] =
    chat.authMode === 'service'
      ? [
          {
            path: ROUTES.listChannelFolders.path,
            keyOf(_req, query) {
              const input = parseWith(ChannelFoldersQuery, parseQuery(query), () => undefined);
              return input && service.channelFoldersKey(input.include_archived);
            },
          },
        ]
      : [];
  return {
    router: createChatRouter({ service, credentials: options.credentials }),
    service,
    cachedRoutes,
  };
}

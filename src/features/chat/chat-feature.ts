import type { Router } from 'express';
import type { CachedLoader } from '../../cache/cached-loader.js';
import type { ChatClient } from '../../upstreams/chat/chat-client.js';
import type { FeatureMounter } from '../route-guards.js';
import { ROUTES } from '../route-table.js';
import { createChatRouter } from './chat-router.js';
import { createChatService, type ChatService } from './chat-service.js';

export interface ChatFeature {
  router: Router;
  service: ChatService;
}

/** The chat routes, mounted from the route table with the caller's (or service) credentials. */
export function createChatFeature(options: {
  client: ChatClient;
  loader: CachedLoader;
  mounter: FeatureMounter;
}): ChatFeature {
  const service = createChatService({
    client: options.client,
    loader: options.loader,
    folders: options.mounter.entryOf(ROUTES.listChannelFolders),
  });
  return { router: createChatRouter({ service, mounter: options.mounter }), service };
}

import { Router } from 'express';
import { toRepresentation } from '../../cache/cache-entry.js';
import { ROUTES } from '../route-table.js';
import type { FeatureMounter } from '../route-guards.js';
import { toChannelList } from './channel-list.js';
import { callOf } from './chat-credentials.js';
import type { ChatService } from './chat-service.js';

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * `/api/chat/...` (contract section 2): each handler is the chat call and the transform. The
 * route table decides the rest: input, guard (the caller's session, or the service account),
 * and for cached routes the key, the scope and the read-through.
 */
export function createChatRouter(options: {
  service: ChatService;
  mounter: FeatureMounter;
}): Router {
  const { service, mounter } = options;
  const { client } = service;
  const router = Router();

  mounter.mount(router, ROUTES.listDrafts, async (req, res, { caller }) => {
    res.set('Cache-Control', 'no-store').json(await service.drafts(callOf(req, caller)));
  });

  mounter.mountCached(router, ROUTES.listChannelFolders, ({ query, caller }, req) =>
    service.loadFolders(callOf(req, caller), query.include_archived),
  );

  mounter.mountCached(router, ROUTES.listChannels, async ({ query, caller }, req) => {
    const { include_archived: includeArchived } = query;
    const streams = await client.getStreams(callOf(req, caller), { includeArchived });
    // The service account answers everyone: no channel beyond what every user may see.
    const publicOnly = caller.userId === undefined;
    return toRepresentation(toChannelList(streams, { includeArchived, publicOnly }), JSON_TYPE);
  });

  mounter.mount(router, ROUTES.getUserByEmail, async (req, res, { path, query, caller }) => {
    const user = await client.getUserByEmail(callOf(req, caller), path.email, {
      ...(query.client_gravatar === undefined ? {} : { clientGravatar: query.client_gravatar }),
      ...(query.include_custom_profile_fields === undefined
        ? {}
        : { includeCustomProfileFields: query.include_custom_profile_fields }),
    });
    res.set('Cache-Control', 'no-store').json({ user });
  });

  mounter.mount(router, ROUTES.setUserStatus, async (req, res, { path, body, caller }) => {
    await client.updateUserStatus(callOf(req, caller), path.user_id, body);
    res.status(204).end();
  });

  mounter.mount(router, ROUTES.deactivateEmoji, async (req, res, { path, caller }) => {
    await client.deactivateEmoji(callOf(req, caller), path.emoji_name);
    res.status(204).end();
  });

  return router;
}

import { Router, type Request } from 'express';
import { parseInput } from '../../errors/validation-error.js';
import { methodNotAllowed } from '../../http/error-handler.js';
import type { ChatCall } from '../../upstreams/chat/chat-client.js';
import type { ChatCredentialsResolver } from './chat-credentials.js';
import {
  ChannelFoldersQuery,
  EmailParams,
  EmojiParams,
  StatusBody,
  UserIdParams,
  UserQuery,
} from './chat-inputs.js';
import type { ChatService } from './chat-service.js';

export interface ChatRouterOptions {
  service: ChatService;
  credentials: ChatCredentialsResolver;
}

/** `/api/chat/...` (contract section 2): parse input, resolve the caller, call the service, send. */
export function createChatRouter(options: ChatRouterOptions): Router {
  const { service } = options;
  const router = Router();
  const callOf = async (req: Request): Promise<ChatCall> => ({
    credentials: await options.credentials(req),
    requestId: req.id,
  });

  router
    .route('/drafts')
    .get(async (req, res) => {
      const result = await service.drafts(await callOf(req));
      res.set('Cache-Control', 'no-store').json(result);
    })
    .all(methodNotAllowed(['GET']));

  router
    .route('/channel-folders')
    .get(async (req, res) => {
      const { include_archived } = parseInput(ChannelFoldersQuery, req.query, 'query');
      const result = await service.channelFolders(await callOf(req), include_archived);
      res
        .status(200)
        .set({
          'Content-Type': result.contentType,
          'X-Cache': result.cacheStatus,
          'Cache-Control': 'no-store',
        })
        .send(result.body);
    })
    .all(methodNotAllowed(['GET']));

  router
    .route('/users/:email')
    .get(async (req, res) => {
      const { email } = parseInput(EmailParams, req.params, 'path');
      const query = parseInput(UserQuery, req.query, 'query');
      const result = await service.user(await callOf(req), email, {
        ...(query.client_gravatar === undefined ? {} : { clientGravatar: query.client_gravatar }),
        ...(query.include_custom_profile_fields === undefined
          ? {}
          : { includeCustomProfileFields: query.include_custom_profile_fields }),
      });
      res.set('Cache-Control', 'no-store').json(result);
    })
    .all(methodNotAllowed(['GET']));

  router
    .route('/users/:user_id/status')
    .post(async (req, res) => {
      const { user_id } = parseInput(UserIdParams, req.params, 'path');
      const update = parseInput(StatusBody, req.body, 'body');
      await service.updateStatus(await callOf(req), user_id, update);
      res.status(204).end();
    })
    .all(methodNotAllowed(['POST']));

  router
    .route('/emoji/:emoji_name')
    .delete(async (req, res) => {
      const { emoji_name } = parseInput(EmojiParams, req.params, 'path');
      await service.deactivateEmoji(await callOf(req), emoji_name);
      res.status(204).end();
    })
    .all(methodNotAllowed(['DELETE']));

  return router;
}

import { Router, type Request, type Response } from 'express';
import { parseInput } from '../../errors/validation-error.js';
import { methodNotAllowed } from '../../http/error-handler.js';
import { sendRepresentation } from '../../http/send-representation.js';
import type { ChatCall } from '../../upstreams/chat/chat-client.js';
import { callAsCaller, type ChatCredentialsResolver } from './chat-credentials.js';
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
  const { service, credentials } = options;
  const router = Router();

  const asCaller = <T>(req: Request, res: Response, fn: (call: ChatCall) => Promise<T>) =>
    callAsCaller(credentials, req, res, fn);

  router
    .route('/drafts')
    .get(async (req, res) => {
      const result = await asCaller(req, res, (call) => service.drafts(call));
      res.set('Cache-Control', 'no-store').json(result);
    })
    .all(methodNotAllowed(['GET']));

  router
    .route('/channel-folders')
    .get(async (req, res) => {
      const { include_archived } = parseInput(ChannelFoldersQuery, req.query, 'query');
      // The hit path read this entry already when it admitted the request.
      const read = req.admission?.read;
      const known = read?.key === service.channelFoldersKey(include_archived) ? read : undefined;
      const result = await asCaller(req, res, (call) =>
        service.channelFolders(call, include_archived, {
          log: req.log,
          ...(known ? { known } : {}),
        }),
      );
      sendRepresentation(req, res, result.representation, result);
    })
    .all(methodNotAllowed(['GET']));

  router
    .route('/users/:email')
    .get(async (req, res) => {
      const { email } = parseInput(EmailParams, req.params, 'path');
      const query = parseInput(UserQuery, req.query, 'query');
      const result = await asCaller(req, res, (call) =>
        service.user(call, email, {
          ...(query.client_gravatar === undefined ? {} : { clientGravatar: query.client_gravatar }),
          ...(query.include_custom_profile_fields === undefined
            ? {}
            : { includeCustomProfileFields: query.include_custom_profile_fields }),
        }),
      );
      res.set('Cache-Control', 'no-store').json(result);
    })
    .all(methodNotAllowed(['GET']));

  router
    .route('/users/:user_id/status')
    .post(async (req, res) => {
      const { user_id } = parseInput(UserIdParams, req.params, 'path');
      const update = parseInput(StatusBody, req.body, 'body');
      await asCaller(req, res, (call) => service.updateStatus(call, user_id, update));
      res.status(204).end();
    })
    .all(methodNotAllowed(['POST']));

  router
    .route('/emoji/:emoji_name')
    .delete(async (req, res) => {
      const { emoji_name } = parseInput(EmojiParams, req.params, 'path');
      await asCaller(req, res, (call) => service.deactivateEmoji(call, emoji_name));
      res.status(204).end();
    })
    .all(methodNotAllowed(['DELETE']));

  return router;
}

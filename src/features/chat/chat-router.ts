import { Router, type Request, type Response } from 'express';
import { isAppError } from '../../errors/app-error.js';
import { parseInput } from '../../errors/validation-error.js';
import { methodNotAllowed } from '../../http/error-handler.js';
import { sendRepresentation } from '../../http/send-representation.js';
import { refusedCredentialsOf, type ChatCall } from '../../upstreams/chat/chat-client.js';
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
  const { service, credentials } = options;
  const router = Router();

  /** Runs a chat call as the request's caller; a refusal of those credentials is theirs to map. */
  async function asCaller<T>(
    req: Request,
    res: Response,
    fn: (call: ChatCall) => Promise<T>,
  ): Promise<T> {
    const call = { credentials: await credentials.resolve(req, res), requestId: req.id };
    try {
      return await fn(call);
    } catch (error) {
      // Only a refusal of this caller's own credentials is theirs: a shared (single-flight)
      // load may fail on another caller's revoked key.
      if (isAppError(error) && refusedCredentialsOf(error) === call.credentials) {
        throw await credentials.refused(req, res, error);
      }
      throw error;
    }
  }

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

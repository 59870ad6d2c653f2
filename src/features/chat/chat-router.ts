import { Router, type Request, type Response } from 'express';
import { mountRoute } from '../../http/route-spec.js';
import { sendRepresentation } from '../../http/send-representation.js';
import type { ChatCall } from '../../upstreams/chat/chat-client.js';
import { ROUTES } from '../route-table.js';
import { callAsCaller, type ChatCredentialsResolver } from './chat-credentials.js';
import type { ChatService } from './chat-service.js';

export interface ChatRouterOptions {
  service: ChatService;
  credentials: ChatCredentialsResolver;
}

/** `/api/chat/...` (contract section 2): resolve the caller, call the service, send. */
export function createChatRouter(options: ChatRouterOptions): Router {
  const { service, credentials } = options;
  const router = Router();

  const asCaller = <T>(req: Request, res: Response, fn: (call: ChatCall) => Promise<T>) =>
    callAsCaller(credentials, req, res, fn);

  mountRoute(router, ROUTES.listDrafts, async (req, res) => {
    const result = await asCaller(req, res, (call) => service.drafts(call));
    res.set('Cache-Control', 'no-store').json(result);
  });

  mountRoute(router, ROUTES.listChannelFolders, async (req, res, { query }) => {
    const { include_archived } = query;
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
  });

  mountRoute(router, ROUTES.getUserByEmail, async (req, res, { path, query }) => {
    const result = await asCaller(req, res, (call) =>
      service.user(call, path.email, {
        ...(query.client_gravatar === undefined ? {} : { clientGravatar: query.client_gravatar }),
        ...(query.include_custom_profile_fields === undefined
          ? {}
          : { includeCustomProfileFields: query.include_custom_profile_fields }),
      }),
    );
    res.set('Cache-Control', 'no-store').json(result);
  });

  mountRoute(router, ROUTES.setUserStatus, async (req, res, { path, body }) => {
    await asCaller(req, res, (call) => service.updateStatus(call, path.user_id, body));
    res.status(204).end();
  });

  mountRoute(router, ROUTES.deactivateEmoji, async (req, res, { path }) => {
    await asCaller(req, res, (call) => service.deactivateEmoji(call, path.emoji_name));
    res.status(204).end();
  });

  return router;
}

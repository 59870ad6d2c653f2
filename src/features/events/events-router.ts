import { Router } from 'express';
import { AppError } from '../../errors/app-error.js';
import { mountRoute } from '../../http/route-spec.js';
import type { SessionCookie } from '../../http/session-cookie.js';
import type { ChatCredentialsResolver } from '../chat/chat-credentials.js';
import type { ChatService } from '../chat/chat-service.js';
import { ROUTES } from '../route-table.js';
import type { EventHub } from './event-hub.js';
import { openStream } from './events-stage.js';

export interface EventsRouterOptions {
  hub: EventHub;
  chat: ChatService;
  credentials: ChatCredentialsResolver;
  /** Session mode: the cookie names the session the stream belongs to. */
  cookie: SessionCookie | undefined;
  maxStreams: number;
  isDraining(): boolean;
}

/**
 * `GET /api/events` (contract section 2.2) for what the events stage (events-stage.ts) leaves
 * to the app: everything a stream is refused for, refused before its first byte as
 * problem+json: bad input (400), no session (401), a full or draining instance (503 with
 * Retry-After, so a page's own back-off takes it elsewhere or later); and a stream the stage
 * could not yet tell about (a session store that failed it a moment ago).
 */
export function createEventsRouter(options: EventsRouterOptions): Router {
  const { hub } = options;
  const router = Router();
  mountRoute(router, ROUTES.events, async (req, res, { query }) => {
    const { include_archived } = query;
    if (options.isDraining() || hub.size >= options.maxStreams) {
      throw new AppError(
        'SERVICE_UNAVAILABLE',
        options.isDraining()
          ? 'This instance is shutting down; reconnect shortly.'
          : 'This instance holds as many event streams as it may; reconnect shortly.',
        { retryAfterSeconds: 5 },
      );
    }
    // 401 without a session (session mode); the stream then follows that session.
    const credentials = await options.credentials.resolve(req, res);
    openStream(options, req, res, credentials, include_archived);
  });
  return router;
}

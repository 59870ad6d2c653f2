import { Router } from 'express';
import type { SessionCookie } from '../../http/session-cookie.js';
import type { ChatCredentialsResolver } from '../chat/chat-credentials.js';
import type { ChatService } from '../chat/chat-service.js';
import type { FeatureMounter } from '../route-guards.js';
import { ROUTES } from '../route-table.js';
import { STREAM_HEADERS, type EventHub } from './event-hub.js';
import { openStream } from './events-stage.js';
import type { StreamAdmission } from './stream-admission.js';

export interface EventsRouterOptions {
  hub: EventHub;
  chat: ChatService;
  credentials: ChatCredentialsResolver;
  /** Session mode: the cookie names the session the stream belongs to. */
  cookie: SessionCookie | undefined;
  /** Whether a stream may open: the events stage asks the same (stream-admission.ts). */
  admission: StreamAdmission;
  mounter: FeatureMounter;
}

/**
 * `GET /api/events` (contract section 2.2) for what the events stage (events-stage.ts) leaves
 * to the app: everything a stream is refused for, refused before its first byte as
 * problem+json: bad input (400), no session (401), a full or draining instance (503 with
 * Retry-After, so a page's own back-off takes it elsewhere or later), a caller past
 * EVENTS_MAX_STREAMS_PER_CLIENT (429 TOO_MANY_STREAMS with Retry-After); a stream the stage
 * could not yet tell about (a session store that failed it a moment ago); and HEAD.
 */
export function createEventsRouter(options: EventsRouterOptions): Router {
  const { admission } = options;
  const router = Router();
  // The route's guard answers 401 without a session (session mode) before this runs; the
  // stream then follows that session.
  options.mounter.mount(router, ROUTES.events, (req, res, { query, caller }) => {
    const { include_archived } = query;
    const early = admission.instanceRefusal();
    if (early !== undefined) throw admission.refuse(early);
    const client = admission.clientOf(req, caller);
    const refusal = admission.refusal(client);
    if (refusal !== undefined) throw admission.refuse(refusal);
    if (req.method === 'HEAD') {
      // Express runs a GET route for HEAD: answer what a GET would get, its head alone, now,
      // and hold no slot (contract section 2.2, v4): a stream's head would wait for a body
      // HEAD never has.
      res.writeHead(200, STREAM_HEADERS).end();
      return;
    }
    openStream(options, req, res, caller.credentials, include_archived, client);
  });
  return router;
}

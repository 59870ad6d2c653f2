import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import { parseWith } from '../../errors/parse-with.js';
import type { Stage } from '../../http/edge.js';
import {
  countersOf,
  judge,
  setLimitHeaders,
  type RateLimitPolicy,
} from '../../http/rate-limits.js';
import { hasBody } from '../../http/request-target.js';
import type { SessionCookie } from '../../http/session-cookie.js';
import type { SharedState } from '../../state/shared-state.js';
import type { ChatCredentialsResolver } from '../chat/chat-credentials.js';
import { ChannelFoldersQuery } from '../chat/chat-inputs.js';
import type { ChatService } from '../chat/chat-service.js';
import type { ChatCredentials } from '../../upstreams/chat/chat-client.js';
import type { EventHub } from './event-hub.js';
import type { StreamAdmission } from './stream-admission.js';
import { variantOf } from './stream-set.js';

/** A version as the stream sends it: the identity ETag's value (a base64url SHA-256). */
const VERSION = /^[A-Za-z0-9_-]{43}$/;

export interface EventsStageOptions {
  /** The exact path of the route, e.g. `/api/events`. */
  path: string;
  hub: EventHub;
  chat: ChatService;
  credentials: ChatCredentialsResolver;
  /** Session mode: the cookie names the session the stream belongs to. */
  cookie: SessionCookie | undefined;
  /** The general rate limits, counted once per stream opened as for any request. */
  policies: readonly RateLimitPolicy[];
  state: SharedState;
  /** Whether a stream may open: the route asks the same (stream-admission.ts). */
  admission: StreamAdmission;
}

/**
 * Opens `GET /api/events` streams in front of the app (contract section 2.2), past the edge
 * (request id, log line, security headers, CORS). A stream lives for hours, and what Express
 * leaves on a request (its prototypes' state, the router's closures, the parsed query and URL)
 * would live as long: measured with heap snapshots, 4.2 KiB of a stream's 17.7. Only a stream that
 * will open is taken here; anything to refuse (bad input, a limit, no session, a full or
 * draining instance, a caller past its own quota) goes on to the app's route, which answers it
 * as problem+json (and counts the refusal), and reuses this request's rate-limit count rather
 * than counting again. A HEAD goes on too: the route answers it at once.
 */
export function createEventsStage(options: EventsStageOptions): Stage {
  const { admission } = options;
  return (req, res, next) => {
    const { target } = req;
    if (
      req.method !== 'GET' ||
      target?.path !== options.path ||
      hasBody(req) ||
      admission.instanceRefusal() !== undefined
    ) {
      return next();
    }
    const input = parseWith(ChannelFoldersQuery, parseQuery(target.query), () => undefined);
    if (input === undefined) return next();
    open(req, res, input.include_archived).then(
      (opened) => {
        if (!opened) next();
      },
      // Sessions unreadable (Redis away): the route says so as it would (503).
      () => next(),
    );
  };

  /** Opens the stream, or says it will not (the app's route then answers why). */
  async function open(
    req: IncomingMessage,
    res: ServerResponse,
    includeArchived: boolean,
  ): Promise<boolean> {
    const applicable = countersOf(options.policies, req);
    const { counts } = await options.state.countAndRead(
      applicable.map((a) => a.counter),
      undefined,
      req.log,
    );
    const verdict = judge(applicable, counts);
    req.admission = { verdict };
    if (verdict.retryAfterSeconds !== undefined) return false;
    // Without a session (session mode) the route answers 401 and clears the cookie.
    const caller = await options.credentials.peek(req);
    if (caller === undefined) return false;
    // Checked again after the awaits, and just before the stream opens: another may have taken
    // the last slot meanwhile.
    const client = admission.clientOf(req, caller);
    if (admission.refusal(client) !== undefined) return false;
    setLimitHeaders(verdict, res);
    openStream(options, req, res, caller.credentials, includeArchived, client);
    return true;
  }
}

/** Hands the response to the hub as a stream of the caller's folder list. */
export function openStream(
  options: Pick<EventsStageOptions, 'hub' | 'chat' | 'cookie'>,
  req: IncomingMessage,
  res: ServerResponse,
  credentials: ChatCredentials,
  includeArchived: boolean,
  /** Whom the stream counts against (stream-admission.ts), read before the headers go. */
  client?: string,
): void {
  const lastEventId = req.headers['last-event-id'];
  const requestId = req.id;
  options.hub.open(res, {
    variant: variantOf(includeArchived),
    lastEventId:
      typeof lastEventId === 'string' && VERSION.test(lastEventId) ? lastEventId : undefined,
    ...(options.cookie ? { session: options.cookie.read(req) } : {}),
    client,
    current: async () =>
      (await options.chat.channelFolders({ credentials, requestId }, includeArchived))
        .representation,
  });
  releaseHeaders(req);
}

/**
 * A stream's request lives as long as the stream (hours), but its headers have been read by now:
 * the edge's checks, the credentials, `Last-Event-ID`, the session cookie (the log line's request
 * fields were bound when it started). A browser sends ~15 of them, its cookies and user agent
 * among them: each stream would keep them twice over, as `rawHeaders` and as the parsed object.
 */
function releaseHeaders(req: IncomingMessage): void {
  req.rawHeaders = [];
  req.headers = {};
}

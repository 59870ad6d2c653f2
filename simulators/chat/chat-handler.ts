import type { ServerResponse } from 'node:http';
import { sendJson, type SimHandler } from '../sim-server.js';
import { authenticate } from './chat-auth.js';
import { CHANNEL_ROUTES } from './chat-channel-routes.js';
import { CONTENT_ROUTES } from './chat-content-routes.js';
import { ChatApiError, rateLimited } from './chat-errors.js';
import { createChatParams, parseFormBody } from './chat-params.js';
import type { EventQueues } from './chat-events.js';
import type { ChatRealm } from './chat-realm.js';
import { sendError, sendSuccess } from './chat-responses.js';
import type { ChatRoute } from './chat-route.js';
import { STATUS_ROUTES } from './chat-status-route.js';
import { USER_ROUTES } from './chat-user-routes.js';

const API_PREFIX = '/api/v1';

/** The real-time events endpoints (long-polls: answered asynchronously) and their methods. */
const EVENT_ROUTES: Readonly<Record<string, readonly string[]>> = {
  '/register': ['POST'],
  '/events': ['GET', 'DELETE'],
};

/** Order matters: /users/me is listed before /users/{email}, as in Zulip's urls.py. */
const ROUTES: readonly ChatRoute[] = [
  ...USER_ROUTES,
  ...STATUS_ROUTES,
  ...CONTENT_ROUTES,
  ...CHANNEL_ROUTES,
];

/** Pending simulated rate limits: each answers one request with 429. */
export interface RateLimitQueue {
  /** Seconds to report for the next limited request, or undefined when none is pending. */
  take(): number | undefined;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * Paths Zulip does not route (or does not route at this feature level). Neither document says
 * what this looks like; the simulator answers like Zulip's other not-found errors
 * (ResourceNotFoundError: 404, code BAD_REQUEST), with the HTTP reason phrase as `msg`.
 */
function sendUnknownEndpoint(res: ServerResponse): void {
  sendError(res, new ChatApiError(404, 'BAD_REQUEST', 'Not Found'));
}

/**
 * Zulip's json_method_not_allowed, verbatim: 405, an `Allow` header and `allowed_methods`.
 * Zulip sends no `code` here, so neither does the simulator.
 */
function sendMethodNotAllowed(res: ServerResponse, allowed: readonly string[]): void {
  res.setHeader('allow', allowed.join(', '));
  sendJson(res, 405, { result: 'error', msg: 'Method Not Allowed', allowed_methods: allowed });
}

/**
 * Routes a request the way Zulip's rest_dispatch does: path (404), method (405), then
 * authentication, then the rate limit (applied to authenticated users, as Zulip's
 * rate_limit_user; fetch_api_key is limited before it authenticates anyone), then the view.
 */
export function createChatHandler(deps: {
  realm: ChatRealm;
  rateLimits: RateLimitQueue;
  now: () => number;
  events: EventQueues;
  /** The simulator's own control interface (not Zulip's): below /__sim/. */
  control: SimHandler;
}): SimHandler {
  const { realm } = deps;
  return async (req, res, recorded) => {
    if (recorded.pathname.startsWith('/__sim/')) return deps.control(req, res, recorded);
    const relative = recorded.pathname.startsWith(`${API_PREFIX}/`)
      ? recorded.pathname.slice(API_PREFIX.length)
      : undefined;
    const candidates =
      relative === undefined
        ? []
        : ROUTES.filter(
            (route) =>
              route.pattern.test(relative) && realm.featureLevel >= (route.minFeatureLevel ?? 0),
          );
    const eventsRoute = relative === undefined ? undefined : EVENT_ROUTES[relative];
    if (eventsRoute) {
      if (!eventsRoute.includes(recorded.method)) return sendMethodNotAllowed(res, eventsRoute);
      const query = new URLSearchParams(recorded.url.split('?')[1] ?? '');
      const params = createChatParams(
        query,
        parseFormBody(req.headers['content-type'], recorded.body),
      );
      const closed = new Promise<void>((resolve) => res.once('close', () => resolve()));
      try {
        const user = authenticate(realm, req.headers.authorization);
        const retryAfter = deps.rateLimits.take();
        if (retryAfter !== undefined) throw rateLimited(retryAfter, deps.now());
        let data: Record<string, unknown>;
        if (relative === '/register') data = deps.events.register(user, params);
        else if (recorded.method === 'GET') data = await deps.events.poll(user, params, closed);
        else data = deps.events.remove(user, params);
        if (res.destroyed) return;
        sendSuccess(res, data, params.ignored(), realm.featureLevel);
      } catch (error) {
        if (!(error instanceof ChatApiError)) throw error;
        sendError(res, error);
      }
      return;
    }
    if (relative === undefined || candidates.length === 0) return sendUnknownEndpoint(res);
    const route = candidates.find((candidate) => candidate.method === recorded.method);
    if (!route) return sendMethodNotAllowed(res, [...new Set(candidates.map((c) => c.method))]);

    const query = new URLSearchParams(recorded.url.split('?')[1] ?? '');
    const body = parseFormBody(req.headers['content-type'], recorded.body);
    const params = createChatParams(query, body);
    const path = (route.pattern.exec(relative)?.slice(1) ?? []).map(decodeSegment);
    const context = { realm, params, path };
    const applyRateLimit = (): void => {
      const retryAfter = deps.rateLimits.take();
      if (retryAfter !== undefined) throw rateLimited(retryAfter, deps.now());
    };
    try {
      let data: Record<string, unknown>;
      if (route.authenticated) {
        const user = authenticate(realm, req.headers.authorization);
        applyRateLimit();
        data = route.handle({ ...context, user });
      } else {
        applyRateLimit();
        data = route.handle(context);
      }
      sendSuccess(res, data, params.ignored(), realm.featureLevel);
    } catch (error) {
      if (!(error instanceof ChatApiError)) throw error;
      sendError(res, error);
    }
  };
}

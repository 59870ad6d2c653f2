import type { z } from 'zod';
import { OPS_TAGS, SCHEMA_NAMES } from '../http/ops-routes.js';
import { namedSchema } from '../http/route-spec.js';
import {
  ChannelFoldersResponse,
  DraftsResponse,
  UserResponse,
} from '../upstreams/chat/chat-schemas.js';
import { ResultList } from '../upstreams/search/search-schemas.js';
import { SessionDescription } from './auth/describe-session.js';
import { BootstrapBody } from './bootstrap/bootstrap-schema.js';
import type { ChannelFoldersQuery } from './chat/chat-inputs.js';
import { ChannelList } from './chat/channel-list.js';

/*
 * What the route table's entries (route-table.ts) refer to: the answer schemas by the names
 * the OpenAPI document gives them, the tags and what each groups, the cache windows a cached
 * route starts from, and the errors and sentences several routes share.
 */

/** The folder and channel lists' one input. */
export type IncludeArchived = z.output<typeof ChannelFoldersQuery>;

/** What answers are shaped by, each named once for the OpenAPI document's components. */
export const Schemas = {
  ...SCHEMA_NAMES,
  ResultList: namedSchema('ResultList', ResultList),
  Drafts: namedSchema('Drafts', DraftsResponse),
  ChannelFolders: namedSchema('ChannelFolders', ChannelFoldersResponse),
  ChannelList: namedSchema('ChannelList', ChannelList),
  User: namedSchema('User', UserResponse),
  Session: namedSchema('Session', SessionDescription),
  Bootstrap: namedSchema('Bootstrap', BootstrapBody),
};

/** The cache windows every cached route starts from (its variables change them). */
export const WINDOWS = { ttlSeconds: 60, staleSeconds: 300, staleIfErrorSeconds: 3600 } as const;

/** The API's tags, in no particular order: the document lists them in the routes' order. */
export const API_TAGS = {
  search:
    'Product search: result lists from the search service, reranked and cached, and the click-tracking redirect their links go through.',
  chat: "The chat server (Zulip) as the caller sees it: drafts, channel folders, channels, users, statuses and custom emoji. In `session` mode with the caller's own credentials, in `service` mode with the service account's.",
  events: 'What the gateway pushes to a page, as server-sent events.',
  bootstrap: "The frontend's first screen in one call.",
  auth: '`session` mode only: log in with chat credentials, log out, and who is logged in.',
} as const;

/** Every tag a route may name (RouteSpec.tag), with what it groups: the document's tag list. */
export const ROUTE_TAGS: Readonly<Record<string, string>> = { ...API_TAGS, ...OPS_TAGS };

/** What a 502, 504 or 503 from a route that calls the chat server means. */
export const CHAT_FAULTS =
  "502 and 504 are the chat server's faults (a refused connection, a bad body, a timeout), 503 its open circuit breaker, with `Retry-After`.";
/** What an unsafe route's guards answer before its body is read. */
export const UNSAFE_GUARDS =
  'An unsafe request: without `X-CSRF: 1` and an origin in CORS_ORIGINS (or `Sec-Fetch-Site: same-origin`) it is 403 `CSRF_REJECTED`; a body that is not JSON is 415, one over BODY_LIMIT_BYTES 413.';
/** Who may call a `chatCaller` route. */
export const CHAT_CALLER =
  "In `session` mode it needs a session (401 without one, or once the chat server refuses the session's key, which ends it); in `service` mode it acts as the service account.";

/** A route that calls an upstream may answer its faults. */
export const UPSTREAM = [502, 504];
/** An unsafe request: anti-forgery, body size and type. */
export const UNSAFE = [403, 413, 415];

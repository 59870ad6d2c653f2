import type { z } from 'zod';
import { OPS_ROUTES, SCHEMA_NAMES } from '../http/ops-routes.js';
import { declareRouteFor, namedSchema, type RouteSpec } from '../http/route-spec.js';
import {
  ChannelFoldersResponse,
  DraftsResponse,
  UserResponse,
} from '../upstreams/chat/chat-schemas.js';
import { ResultList } from '../upstreams/search/search-schemas.js';
import { LoginBody } from './auth/auth-inputs.js';
import { SessionDescription } from './auth/describe-session.js';
import { BootstrapBody } from './bootstrap/bootstrap-schema.js';
import {
  ChannelFoldersQuery,
  EmailParams,
  EmojiParams,
  StatusBody,
  UserIdParams,
  UserQuery,
} from './chat/chat-inputs.js';
import { ChannelList } from './chat/channel-list.js';
import type { RouteContext } from './route-context.js';
import type { SearchFormat } from '../upstreams/search/search-client.js';
import { createSearchQuerySchema, type SearchRequest } from './search/search-query.js';

/** The folder and channel lists' one input. */
type IncludeArchived = z.output<typeof ChannelFoldersQuery>;

/*
 * The route table (contract section 2): every route the gateway serves, declared once. The
 * routers mount these declarations (http/route-spec.ts, mountRoute), the OpenAPI document is
 * generated from them (openapi/openapi-document.ts), the metrics' route labels are their
 * templates, and the hit path answers the paths of the cached ones.
 */

/** What answers are shaped by, each named once for the OpenAPI document's components. */
const Schemas = {
  ...SCHEMA_NAMES,
  ResultList: namedSchema('ResultList', ResultList),
  Drafts: namedSchema('Drafts', DraftsResponse),
  ChannelFolders: namedSchema('ChannelFolders', ChannelFoldersResponse),
  ChannelList: namedSchema('ChannelList', ChannelList),
  User: namedSchema('User', UserResponse),
  Session: namedSchema('Session', SessionDescription),
  Bootstrap: namedSchema('Bootstrap', BootstrapBody),
};

const declareRoute = declareRouteFor<RouteContext>();

/** The cache windows every cached route starts from (its variables change them). */
const WINDOWS = { ttlSeconds: 60, staleSeconds: 300, staleIfErrorSeconds: 3600 } as const;

/** The search document's two representations, by the media type Accept chose. */
export const SEARCH_FORMATS: Readonly<Record<string, SearchFormat>> = {
  'application/json': 'json',
  'application/ld+json': 'ld+json',
};

/** A route that calls an upstream may answer its faults. */
const UPSTREAM = [502, 504];
/** An unsafe request: anti-forgery, body size and type. */
const UNSAFE = [403, 413, 415];

export const ROUTES = {
  search: declareRoute({
    id: 'search',
    method: 'get',
    path: '/api/search',
    summary: 'Search products, reranked; `next` continues with a cursor.',
    inputs: { query: (context: { maxK: number }) => createSearchQuerySchema(context.maxK) },
    answers: {
      200: {
        description: 'A result list (JSON or LD-JSON).',
        body: Schemas.ResultList,
        media: ['application/json', 'application/ld+json'],
      },
    },
    errors: [400, 406, ...UPSTREAM],
    auth: 'none',
    cache: {
      resource: 'search',
      scope: 'shared',
      version: 3,
      upstream: 'search',
      windows: WINDOWS,
      key: (
        { query, accept }: { query: SearchRequest; accept: string },
        { search }: RouteContext,
      ) => {
        const { sort, digest } = search.resolve(query);
        return [SEARCH_FORMATS[accept] ?? 'json', sort, search.linksKey, digest];
      },
    },
  }),
  followResultLink: declareRoute({
    id: 'followResultLink',
    method: 'get',
    path: '/api/search/url',
    summary: 'The click-tracking redirect, proxied byte-for-byte.',
    description:
      'With SEARCH_LINKS=gateway only links the gateway issued are followed: their query ends with `sig`, an HMAC over every byte before it, and goes upstream without it. With SEARCH_LINKS=upstream the query passes as it is.',
    parameters: [
      {
        name: 'sig',
        in: 'query',
        required: false,
        description: 'SEARCH_LINKS=gateway: the last parameter, as the gateway issued it.',
        schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{22}$' },
      },
    ],
    answers: {
      '3XX': { description: "The search service's redirect; Location passes through." },
      400: {
        description:
          '`INVALID_LINK` (SEARCH_LINKS=gateway): the query does not end with the `sig` the gateway signed it with (missing, altered, repeated or not last); no upstream call is made. `BAD_REQUEST`: the search service rejected the link.',
        body: Schemas.Problem,
        media: ['application/problem+json'],
      },
    },
    errors: UPSTREAM,
    auth: 'none',
  }),
  listDrafts: declareRoute({
    id: 'listDrafts',
    method: 'get',
    path: '/api/chat/drafts',
    summary: "The caller's drafts, most recently edited first.",
    answers: { 200: { description: 'The drafts.', body: Schemas.Drafts } },
    errors: UPSTREAM,
    auth: 'chatCaller',
  }),
  listChannelFolders: declareRoute({
    id: 'listChannelFolders',
    method: 'get',
    path: '/api/chat/channel-folders',
    summary: "The realm's channel folders by `order`.",
    inputs: { query: ChannelFoldersQuery },
    answers: { 200: { description: 'The folders.', body: Schemas.ChannelFolders } },
    errors: [400, ...UPSTREAM],
    auth: 'chatCaller',
    cache: {
      resource: 'channel_folders',
      // The organization's folders: the same list whoever asks.
      scope: 'shared',
      version: 4,
      upstream: 'chat',
      windows: WINDOWS,
      key: ({ query }: { query: IncludeArchived }, { realm }: RouteContext) => [
        `archived=${query.include_archived}`,
        realm,
      ],
    },
  }),
  listChannels: declareRoute({
    id: 'listChannels',
    method: 'get',
    path: '/api/chat/channels',
    summary: 'The channels the caller may see, by name.',
    description:
      "Zulip's `GET /streams` as the caller sees it: `id` is `stream_id`, `private` is `invite_only`; sorted by `name` in lower case, ties by `id`. Archived channels only with `include_archived`. In `service` mode only public channels.",
    inputs: { query: ChannelFoldersQuery },
    answers: { 200: { description: 'The channels.', body: Schemas.ChannelList } },
    errors: [400, ...UPSTREAM],
    auth: 'chatCaller',
    cache: {
      resource: 'channels',
      // Which channels Zulip lists depends on the account: one entry per chat user.
      scope: 'user',
      version: 1,
      upstream: 'chat',
      // Never served past TTL plus stale, even when the chat server fails (contract section 2).
      windows: { ...WINDOWS, staleIfErrorSeconds: 0 },
      key: ({ query }: { query: IncludeArchived }, { realm }: RouteContext) => [
        `archived=${query.include_archived}`,
        realm,
      ],
    },
  }),
  getUserByEmail: declareRoute({
    id: 'getUserByEmail',
    method: 'get',
    path: '/api/chat/users/{email}',
    summary: 'One user of the organization.',
    inputs: { path: EmailParams, query: UserQuery },
    answers: { 200: { description: 'The user.', body: Schemas.User } },
    errors: [400, 403, 404, ...UPSTREAM],
    auth: 'chatCaller',
  }),
  setUserStatus: declareRoute({
    id: 'setUserStatus',
    method: 'post',
    path: '/api/chat/users/{user_id}/status',
    summary: "Set another user's status (administrators).",
    inputs: { path: UserIdParams, body: StatusBody },
    answers: { 204: { description: 'Set.' } },
    errors: [400, ...UNSAFE, 404, ...UPSTREAM],
    auth: 'chatCaller',
  }),
  deactivateEmoji: declareRoute({
    id: 'deactivateEmoji',
    method: 'delete',
    path: '/api/chat/emoji/{emoji_name}',
    summary: 'Deactivate a custom emoji.',
    inputs: { path: EmojiParams },
    answers: { 204: { description: 'Deactivated.' } },
    errors: [400, ...UNSAFE, 404, ...UPSTREAM],
    auth: 'chatCaller',
  }),
  events: declareRoute({
    id: 'events',
    method: 'get',
    path: '/api/events',
    summary:
      "Server-sent events: a `channel_folders` event with the current list, then one per change (contract section 2.2). Each event is `id:` the list version (the folder route's identity ETag without quotes), `event: channel_folders`, `data:` that route's JSON body. Send `Last-Event-ID` to skip a version already held.",
    inputs: { query: ChannelFoldersQuery },
    parameters: [
      {
        name: 'Last-Event-ID',
        in: 'header',
        required: false,
        schema: { type: 'string' },
        description: 'The version the page already shows.',
      },
    ],
    answers: {
      200: {
        description: 'An event stream that stays open.',
        media: 'text/event-stream',
        type: 'string',
      },
    },
    errors: [400, ...UPSTREAM],
    auth: 'chatCaller',
  }),
  bootstrap: declareRoute({
    id: 'bootstrap',
    method: 'get',
    path: '/api/bootstrap',
    summary: 'The first screen in one call; failed parts are null with their problem.',
    answers: { 200: { description: 'Every part, or its problem.', body: Schemas.Bootstrap } },
    errors: [],
    auth: 'none',
  }),
  login: declareRoute({
    id: 'login',
    method: 'post',
    path: '/api/auth/login',
    summary: 'Log in with the chat email and password (or API key).',
    inputs: { body: LoginBody },
    answers: {
      200: { description: 'The new session; the cookie is set.', body: Schemas.Session },
    },
    errors: [400, 401, ...UNSAFE, ...UPSTREAM],
    auth: 'none',
    servedWhen: 'sessionMode',
  }),
  logout: declareRoute({
    id: 'logout',
    method: 'post',
    path: '/api/auth/logout',
    summary: 'End the session.',
    answers: { 204: { description: 'Ended.' } },
    errors: [403],
    auth: 'none',
    servedWhen: 'sessionMode',
  }),
  session: declareRoute({
    id: 'session',
    method: 'get',
    path: '/api/auth/session',
    summary: 'Who is logged in.',
    answers: { 200: { description: 'The session.', body: Schemas.Session } },
    errors: [],
    auth: 'session',
    servedWhen: 'sessionMode',
  }),
} as const;

const api: readonly RouteSpec<RouteContext>[] = Object.values(ROUTES);
const sessionOnly = (route: RouteSpec<RouteContext>) => route.servedWhen === 'sessionMode';

/** Every route: the API's, the documents' and operators' (OPS_ROUTES), then the session routes. */
export const ROUTE_TABLE: readonly RouteSpec<RouteContext>[] = [
  ...api.filter((route) => !sessionOnly(route)),
  ...OPS_ROUTES,
  ...api.filter(sessionOnly),
];

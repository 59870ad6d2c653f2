import { OPS_ROUTES } from '../http/ops-routes.js';
import { declareRouteFor, type RouteSpec } from '../http/route-spec.js';
import { LoginBody } from './auth/auth-inputs.js';
import {
  ChannelFoldersQuery,
  EmailParams,
  EmojiParams,
  StatusBody,
  UserIdParams,
  UserQuery,
} from './chat/chat-inputs.js';
import type { RouteContext } from './route-context.js';
import {
  CHAT_CALLER,
  CHAT_FAULTS,
  Schemas,
  UNSAFE,
  UNSAFE_GUARDS,
  UPSTREAM,
  WINDOWS,
  type API_TAGS,
  type IncludeArchived,
} from './route-parts.js';
import { SEARCH_FORMATS } from './search/search-formats.js';
import { createSearchQuerySchema, type SearchRequest } from './search/search-query.js';

/*
 * The route table (contract section 2): every route the gateway serves, declared once. The
 * routers mount these declarations (http/route-spec.ts, mountRoute), the OpenAPI document is
 * generated from them (openapi/openapi-document.ts), the metrics' route labels are their
 * templates, and the hit path answers the paths of the cached ones.
 */

const declareRoute = declareRouteFor<RouteContext>();

/** The chat lists' key parts: whether archived ones are in, on which chat server. */
const archivedInRealm = ({ query }: { query: IncludeArchived }, { realm }: RouteContext) => [
  `archived=${query.include_archived}`,
  realm,
];

export const ROUTES = {
  search: declareRoute({
    id: 'search',
    method: 'get',
    path: '/api/search',
    summary: 'Search products, reranked; `next` continues with a cursor.',
    description:
      "Searches the product catalogue for `q` and returns the search service's result list, reranked by `sort` (`relevance`, the default, keeps the upstream's order; `price_asc`, `price_desc` and `rating` reorder, items without the key last) and every result link's `rp` kept at the upstream's position. `k` items at most, from 1 to SEARCH_MAX_K (its default). `Accept: application/ld+json` selects LD-JSON; an Accept that allows neither form is 406. `next` is a gateway URL with an opaque `cursor`, which stands alone on the request that follows it; one that does not decode is 400 `INVALID_CURSOR`, with no upstream call. Anyone may call it. Answers are cached and shared by every caller: `X-Cache` and `Cache-Status` say whether the cache answered, a strong `ETag` comes with `Cache-Control: private, no-cache`, and a matching `If-None-Match` is 304. A stale entry is served while it refreshes, or instead of an error when the search service fails; otherwise 502 and 504 are the search service's faults, 503 its open circuit breaker.",
    tag: 'search',
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
      "With SEARCH_LINKS=gateway only links the gateway issued are followed: their query ends with `sig`, an HMAC over every byte before it, and goes upstream without it. With SEARCH_LINKS=upstream the query passes as it is. Anyone may call it; the answer is the search service's redirect, never cached and never followed by the gateway itself. 502 and 504 are the search service's faults, 503 its open circuit breaker.",
    tag: 'search',
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
    description: `The caller's drafts as the chat server keeps them, \`{count, drafts}\`, most recently edited first. ${CHAT_CALLER} Never cached: each call asks the chat server with the caller's credentials. ${CHAT_FAULTS}`,
    tag: 'chat',
    answers: { 200: { description: 'The drafts.', body: Schemas.Drafts } },
    errors: UPSTREAM,
    auth: 'chatCaller',
  }),
  listChannelFolders: declareRoute({
    id: 'listChannelFolders',
    method: 'get',
    path: '/api/chat/channel-folders',
    summary: "The realm's channel folders by `order`.",
    description: `The organization's channel folders, \`{channel_folders}\`, sorted by \`order\` ascending (ties, and every folder of a chat server older than feature level 414, by \`id\`); archived folders only with \`include_archived\`. ${CHAT_CALLER} The list is the organization's, the same for every user, so one cached entry per realm and \`include_archived\` answers everyone: \`X-Cache\` and \`Cache-Status\` say whether the cache answered, a strong \`ETag\` comes with \`Cache-Control: private, no-cache\`, and a matching \`If-None-Match\` is 304. \`GET /api/events\` pushes the same body whenever it changes. A stale entry is served while it refreshes, or instead of an error when the chat server fails. ${CHAT_FAULTS} A chat server too old to have folders is 502.`,
    tag: 'chat',
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
      key: archivedInRealm,
    },
  }),
  listChannels: declareRoute({
    id: 'listChannels',
    method: 'get',
    path: '/api/chat/channels',
    summary: 'The channels the caller may see, by name.',
    description: `Zulip's \`GET /streams\` as the caller sees it: \`id\` is \`stream_id\`, \`private\` is \`invite_only\`; sorted by \`name\` in lower case, ties by \`id\`. Archived channels only with \`include_archived\`. In \`service\` mode only public channels. ${CHAT_CALLER} Cached per chat user, since what a user may see depends on the account (in \`service\` mode one entry), with \`X-Cache\`, \`Cache-Status\`, a strong \`ETag\` and 304 as on the folders; an entry is never served past its TTL plus stale window, not even when the chat server fails. ${CHAT_FAULTS}`,
    tag: 'chat',
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
      key: archivedInRealm,
    },
  }),
  getUserByEmail: declareRoute({
    id: 'getUserByEmail',
    method: 'get',
    path: '/api/chat/users/{email}',
    summary: 'One user of the organization.',
    description: `One user of the organization by email, \`{user}\` as the chat server describes them; \`client_gravatar\` and \`include_custom_profile_fields\` are passed on only when given. The email must hold one \`@\` and no whitespace, at most 254 characters (400 otherwise, before any upstream call), and travels as one percent-encoded path segment. ${CHAT_CALLER} The chat server's "No such user" is 404, its refusal of the caller's rights 403. Never cached. ${CHAT_FAULTS}`,
    tag: 'chat',
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
    description: `Sets the status of the user \`user_id\`: at least one of \`status_text\` (at most 60 code points after trimming), \`emoji_name\`, \`emoji_code\` and \`reaction_type\` (the last two only with \`emoji_name\`), sent to the chat server form-encoded; 204 when it is set. The chat server decides who may (administrators): its refusal is 403, its validation messages 400, an unknown user 404. ${CHAT_CALLER} ${UNSAFE_GUARDS} Never retried. ${CHAT_FAULTS}`,
    tag: 'chat',
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
    description: `Deactivates the custom emoji \`emoji_name\` (one path segment: no \`/\`, \`\\\`, dot segment or control character, 400 otherwise); 204 when it is done. A missing emoji is 404 at every chat server feature level; the chat server decides who may (an administrator or the emoji's author), its refusal is 403. ${CHAT_CALLER} ${UNSAFE_GUARDS} Never retried. ${CHAT_FAULTS}`,
    tag: 'chat',
    inputs: { path: EmojiParams },
    answers: { 204: { description: 'Deactivated.' } },
    errors: [400, ...UNSAFE, 404, ...UPSTREAM],
    auth: 'chatCaller',
  }),
  events: declareRoute({
    id: 'events',
    method: 'get',
    path: '/api/events',
    summary: 'Server-sent events: the channel folders now and on every change.',
    description:
      "One stream per page for everything the gateway pushes (contract section 2.2). It starts with `retry:`, then, unless `Last-Event-ID` names the current version, a `channel_folders` event with the current list, then one per change on any instance, and a comment line every EVENTS_HEARTBEAT_SECONDS while idle. Each event is `id:` the list version (the folder route's identity ETag without quotes), `event: channel_folders`, `data:` that route's JSON body. In `session` mode it needs a session (401 before any stream byte) and ends within 2 s of that session's logout, rotation or expiry. Never cached or compressed. Past EVENTS_MAX_STREAMS_PER_CLIENT streams of one user or address it is 429 `TOO_MANY_STREAMS`; past EVENTS_MAX_STREAMS, or while the instance drains, 503; both with `Retry-After`.",
    tag: 'events',
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
    description:
      "The frontend's first screen in one call: `session`, `channel_folders`, `drafts` and `search.available`, fetched in parallel under one deadline (BOOTSTRAP_TIMEOUT_MS). A part that fails is `null`, with the problem its own route would have answered (plus `part`) in `errors`, so the answer is 200 whenever the gateway itself works. Anyone may call it: with nobody logged in (`session` mode) the user parts are `null` and `errors` is empty; in `service` mode `session` names the service account. `search.available` is the search service's status within 5 s. Not cached as a whole; each part is read as its own route reads it.",
    tag: 'bootstrap',
    answers: { 200: { description: 'Every part, or its problem.', body: Schemas.Bootstrap } },
    errors: [],
    auth: 'none',
  }),
  login: declareRoute({
    id: 'login',
    method: 'post',
    path: '/api/auth/login',
    summary: 'Log in with the chat email and password (or API key).',
    description: `\`session\` mode only. Checks the chat email with a password (the chat server's \`/fetch_api_key\`) or an API key (\`/users/me\`), opens a session and sets its HttpOnly, SameSite cookie (the \`sessionCookie\` scheme), ending the session the browser had. Wrong credentials are 401 with the chat server's message. ${UNSAFE_GUARDS} Failed attempts count against a per-address login limit (429 with \`Retry-After\`); 503 when the login limit's Redis or the session store is unreachable, or the in-process store is full. 502 and 504 are the chat server's faults.`,
    tag: 'auth',
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
    description:
      "`session` mode only. Ends the browser's session on the server, its event streams with it, and clears the cookie; 204, also when there was no session. An unsafe request: without `X-CSRF: 1` and an origin in CORS_ORIGINS (or `Sec-Fetch-Site: same-origin`) it is 403 `CSRF_REJECTED`. 503 when the session store is unreachable.",
    tag: 'auth',
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
    description:
      '`session` mode only. Who is logged in (`user_id`, `email`, `full_name`, `role`) and until when (`created_at`, `idle_expires_at`, `expires_at`); 401 when nobody is. Never cached. 503 with `Retry-After` when the session store is unreachable, never a false 401.',
    tag: 'auth',
    answers: { 200: { description: 'The session.', body: Schemas.Session } },
    errors: [],
    auth: 'session',
    servedWhen: 'sessionMode',
  }),
} as const satisfies Readonly<Record<string, { readonly tag: keyof typeof API_TAGS }>>;

const api: readonly RouteSpec<RouteContext>[] = Object.values(ROUTES);
const sessionOnly = (route: RouteSpec<RouteContext>) => route.servedWhen === 'sessionMode';

/** Every route: the API's, the documents' and operators' (OPS_ROUTES), then the session routes. */
export const ROUTE_TABLE: readonly RouteSpec<RouteContext>[] = [
  ...api.filter((route) => !sessionOnly(route)),
  ...OPS_ROUTES,
  ...api.filter(sessionOnly),
];

import { z } from 'zod';
import type { Config } from '../../config/load-config.js';
import { ProblemSchema } from '../errors/to-problem.js';
import { LoginBody } from '../features/auth/auth-inputs.js';
import { SessionDescription } from '../features/auth/describe-session.js';
import { BootstrapBody } from '../features/bootstrap/bootstrap-schema.js';
import {
  ChannelFoldersQuery,
  EmailParams,
  EmojiParams,
  StatusBody,
  UserIdParams,
  UserQuery,
} from '../features/chat/chat-inputs.js';
import { createSearchQuerySchema } from '../features/search/search-query.js';
import { HealthBody, ReadinessBody } from '../health/readiness.js';
import {
  ChannelFoldersResponse,
  DraftsResponse,
  UserResponse,
} from '../upstreams/chat/chat-schemas.js';
import { ResultList } from '../upstreams/search/search-schemas.js';
import { STATUS_TITLES } from '../errors/to-problem.js';

type Json = Record<string, unknown>;

/** A zod schema as OpenAPI 3.1 (JSON Schema 2020-12): what a request may send, or what comes back. */
function schemaOf(schema: z.ZodType, io: 'input' | 'output'): Json {
  const { $schema, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Json;
  void $schema;
  return rest;
}

/** Query or path parameters from a request schema: the same one that validates the request. */
function parameters(schema: z.ZodType, location: 'query' | 'path'): Json[] {
  const json = schemaOf(schema, 'input');
  const properties = (json['properties'] ?? {}) as Record<string, Json>;
  const required = new Set((json['required'] ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = property;
    // A number in the query string: described as the integer it is, not by its text pattern.
    if (rest['type'] === 'integer') delete rest['pattern'];
    return {
      name,
      in: location,
      required: location === 'path' || required.has(name),
      ...(description === undefined ? {} : { description }),
      schema: rest,
    };
  });
}

const problem = (status: number) => ({ $ref: `#/components/responses/Problem${status}` });
const body = (schema: string, description: string, media = ['application/json']) => ({
  description,
  content: Object.fromEntries(
    media.map((type) => [type, { schema: { $ref: `#/components/schemas/${schema}` } }]),
  ),
});
/** A success of another media type than JSON, described by its type alone. */
const plain = (type: string, schemaType: 'string' | 'object', description: string) => ({
  description,
  content: { [type]: { schema: { type: schemaType } } },
});
/** A 304: the validator the request named is the current representation's. */
const NOT_MODIFIED = {
  description: 'Not modified: the If-None-Match entity-tag is current. No body.',
} as const;
const cached = (schema: string, description: string, media?: string[]) => ({
  200: {
    ...body(schema, description, media),
    headers: {
      ETag: { $ref: '#/components/headers/ETag' },
      'X-Cache': { $ref: '#/components/headers/XCache' },
      'Cache-Status': { $ref: '#/components/headers/CacheStatus' },
    },
  },
  304: NOT_MODIFIED,
});

/** Every /api route may answer these: wrong method, rate limit, a gateway fault or outage. */
const COMMON = [405, 429, 500, 503];
/** A route that calls an upstream may also answer its faults. */
const UPSTREAM = [502, 504];
/** An unsafe request: anti-forgery, body size and type. */
const UNSAFE = [403, 413, 415];

function operation(
  id: string,
  summary: string,
  responses: Record<string, unknown>,
  errors: number[],
  extra: Json = {},
): Json {
  const all = [...new Set([...errors, ...COMMON])].sort();
  return {
    operationId: id,
    summary,
    ...extra,
    responses: { ...responses, ...Object.fromEntries(all.map((s) => [String(s), problem(s)])) },
  };
}

export interface OpenApiOptions {
  /** SEARCH_MAX_K: the largest `k`. */
  maxK: number;
  /** CHAT_AUTH_MODE=session: the auth routes exist and chat routes may answer 401. */
  sessionMode: boolean;
  /** METRICS=on and no OPS_PORT: /metrics is on this listener. */
  metrics: boolean;
  /** No OPS_PORT: /healthz and /readyz are on this listener. */
  health: boolean;
}

/** What a gateway with this configuration serves on its public listener. */
export function openApiOptions(config: Config): OpenApiOptions {
  const health = config.opsPort === undefined;
  return {
    maxK: config.search.maxK,
    sessionMode: config.chat.authMode === 'session',
    metrics: health && config.metrics.enabled,
    health,
  };
}

/**
 * The OpenAPI 3.1 description of every API and operations route (contract section 2),
 * generated from the zod schemas that validate the requests and shape the answers. Served at
 * /openapi.json; a test lints it and checks every integration test's responses against it.
 */
export function createOpenApiDocument(options: OpenApiOptions): Json {
  const searchQuery = parameters(createSearchQuerySchema(options.maxK), 'query');
  const json = (schema: z.ZodType) => ({
    required: true,
    content: { 'application/json': { schema: schemaOf(schema, 'input') } },
  });
  const auth = options.sessionMode ? [401] : [];
  const paths: Json = {
    '/api/search': {
      get: operation(
        'search',
        'Search products, reranked; `next` continues with a cursor.',
        cached('ResultList', 'A result list (JSON or LD-JSON).', [
          'application/json',
          'application/ld+json',
        ]),
        [400, 406, ...UPSTREAM],
        { parameters: searchQuery },
      ),
    },
    '/api/search/url': {
      get: operation(
        'followResultLink',
        'The click-tracking redirect, proxied byte-for-byte.',
        {
          '3XX': { description: "The search service's redirect; Location passes through." },
          400: {
            description:
              '`INVALID_LINK` (SEARCH_LINKS=gateway): the query does not end with the `sig` the gateway signed it with (missing, altered, repeated or not last); no upstream call is made. `BAD_REQUEST`: the search service rejected the link.',
            content: {
              'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } },
            },
          },
        },
        UPSTREAM,
        {
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
        },
      ),
    },
    '/api/chat/drafts': {
      get: operation(
        'listDrafts',
        "The caller's drafts, most recently edited first.",
        { 200: body('Drafts', 'The drafts.') },
        [...auth, ...UPSTREAM],
      ),
    },
    '/api/chat/channel-folders': {
      get: operation(
        'listChannelFolders',
        "The realm's channel folders by `order`.",
        cached('ChannelFolders', 'The folders.'),
        [400, ...auth, ...UPSTREAM],
        { parameters: parameters(ChannelFoldersQuery, 'query') },
      ),
    },
    '/api/chat/users/{email}': {
      get: operation(
        'getUserByEmail',
        'One user of the organization.',
        { 200: body('User', 'The user.') },
        [400, ...auth, 403, 404, ...UPSTREAM],
        { parameters: [...parameters(EmailParams, 'path'), ...parameters(UserQuery, 'query')] },
      ),
    },
    '/api/chat/users/{user_id}/status': {
      post: operation(
        'setUserStatus',
        "Set another user's status (administrators).",
        { 204: { description: 'Set.' } },
        [400, ...auth, ...UNSAFE, 404, ...UPSTREAM],
        { parameters: parameters(UserIdParams, 'path'), requestBody: json(StatusBody) },
      ),
    },
    '/api/chat/emoji/{emoji_name}': {
      delete: operation(
        'deactivateEmoji',
        'Deactivate a custom emoji.',
        { 204: { description: 'Deactivated.' } },
        [400, ...auth, ...UNSAFE, 404, ...UPSTREAM],
        { parameters: parameters(EmojiParams, 'path') },
      ),
    },
    '/api/events': {
      get: operation(
        'events',
        "Server-sent events: a `channel_folders` event with the current list, then one per change (contract section 2.2). Each event is `id:` the list version (the folder route's identity ETag without quotes), `event: channel_folders`, `data:` that route's JSON body. Send `Last-Event-ID` to skip a version already held.",
        {
          200: plain('text/event-stream', 'string', 'An event stream that stays open.'),
        },
        [400, ...auth, ...UPSTREAM],
        {
          parameters: [
            ...parameters(ChannelFoldersQuery, 'query'),
            {
              name: 'Last-Event-ID',
              in: 'header',
              required: false,
              schema: { type: 'string' },
              description: 'The version the page already shows.',
            },
          ],
        },
      ),
    },
    '/api/bootstrap': {
      get: operation(
        'bootstrap',
        'The first screen in one call; failed parts are null with their problem.',
        { 200: body('Bootstrap', 'Every part, or its problem.') },
        [],
      ),
    },
    '/openapi.json': {
      get: operation(
        'openapi',
        'This document.',
        {
          200: plain('application/json', 'object', 'OpenAPI 3.1.'),
          304: NOT_MODIFIED,
        },
        [],
      ),
    },
    '/docs': {
      get: operation(
        'docs',
        'This document, rendered for a person (Swagger UI, served by the gateway).',
        { 200: plain('text/html', 'string', 'A page.') },
        [],
      ),
    },
  };
  if (options.metrics) {
    Object.assign(paths, {
      '/metrics': {
        get: operation(
          'metrics',
          'Prometheus text format.',
          { 200: plain('text/plain', 'string', 'Metrics.') },
          [401],
        ),
      },
    });
  }
  if (options.health) {
    Object.assign(paths, {
      '/healthz': { get: operation('health', 'Alive.', { 200: body('Health', 'Alive.') }, []) },
      '/readyz': {
        get: operation(
          'readiness',
          'Ready to serve (degraded counts as ready).',
          { 200: body('Readiness', 'Ready.'), 503: body('Readiness', 'Draining.') },
          [],
        ),
      },
    });
  }
  if (options.sessionMode) {
    Object.assign(paths, {
      '/api/auth/login': {
        post: operation(
          'login',
          'Log in with the chat email and password (or API key).',
          { 200: body('Session', 'The new session; the cookie is set.') },
          [400, 401, ...UNSAFE, ...UPSTREAM],
          { requestBody: json(LoginBody) },
        ),
      },
      '/api/auth/logout': {
        post: operation('logout', 'End the session.', { 204: { description: 'Ended.' } }, [403]),
      },
      '/api/auth/session': {
        get: operation(
          'session',
          'Who is logged in.',
          { 200: body('Session', 'The session.') },
          [401],
        ),
      },
    });
  }
  const statuses = [400, 401, 403, 404, 405, 406, 413, 415, 429, 500, 502, 503, 504];
  return {
    openapi: '3.1.0',
    info: {
      title: 'BFF gateway',
      version: '2',
      description:
        'The gateway a web frontend calls instead of the chat and search services (GATEWAY-CONTRACT v2).',
    },
    paths,
    components: {
      schemas: {
        Problem: schemaOf(ProblemSchema, 'output'),
        ResultList: schemaOf(ResultList, 'output'),
        Drafts: schemaOf(DraftsResponse, 'output'),
        ChannelFolders: schemaOf(ChannelFoldersResponse, 'output'),
        User: schemaOf(UserResponse, 'output'),
        Session: schemaOf(SessionDescription, 'output'),
        Bootstrap: schemaOf(BootstrapBody, 'output'),
        Health: schemaOf(HealthBody, 'output'),
        Readiness: schemaOf(ReadinessBody, 'output'),
      },
      responses: Object.fromEntries(
        statuses.map((status) => [
          `Problem${status}`,
          {
            description: STATUS_TITLES[status] ?? 'Error',
            content: {
              'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } },
            },
          },
        ]),
      ),
      headers: {
        ETag: {
          description: 'Strong validator over the exact body bytes.',
          schema: { type: 'string' },
        },
        XCache: {
          description: 'HIT, MISS or STALE.',
          schema: { type: 'string', enum: ['HIT', 'MISS', 'STALE'] },
        },
        CacheStatus: {
          description: 'RFC 9211 Cache-Status, cache name bff.',
          schema: { type: 'string' },
        },
      },
    },
  };
}

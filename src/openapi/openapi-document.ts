import { z } from 'zod';
import type { Config } from '../../config/load-config.js';
import { STATUS_TITLES } from '../errors/to-problem.js';
import { ROUTE_TABLE, SCHEMAS } from '../features/route-table.js';
import type { RouteAnswer, RouteSpec } from '../http/route-spec.js';

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
/** What a cached answer's 200 carries besides its body. */
const CACHE_HEADERS = {
  ETag: { $ref: '#/components/headers/ETag' },
  'X-Cache': { $ref: '#/components/headers/XCache' },
  'Cache-Status': { $ref: '#/components/headers/CacheStatus' },
} as const;

/** Every /api route may answer these: wrong method, rate limit, a gateway fault or outage. */
const COMMON = [405, 429, 500, 503];

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

const describeAnswer = (answer: RouteAnswer): Json =>
  'body' in answer
    ? body(answer.body, answer.description, answer.media && [...answer.media])
    : 'type' in answer
      ? plain(answer.media, answer.type, answer.description)
      : { description: answer.description };

/** One route of the table as an OpenAPI operation. */
function describeRoute(route: RouteSpec, options: OpenApiOptions): Json {
  const responses: Json = Object.fromEntries(
    Object.entries(route.answers).map(([status, answer]) => [status, describeAnswer(answer)]),
  );
  if (route.cached) {
    responses['200'] = { ...(responses['200'] as Json), headers: CACHE_HEADERS };
    responses['304'] = NOT_MODIFIED;
  }
  const { path, query, body: requestBody } = route.inputs ?? {};
  const parameterList = [
    ...(path ? parameters(path, 'path') : []),
    ...(query
      ? parameters(typeof query === 'function' ? query(options.maxK) : query, 'query')
      : []),
    ...(route.parameters ?? []),
  ];
  return operation(
    route.id,
    route.summary,
    responses,
    [...route.errors, ...(route.auth && options.sessionMode ? [401] : [])],
    {
      ...(route.description === undefined ? {} : { description: route.description }),
      ...(parameterList.length > 0 ? { parameters: parameterList } : {}),
      ...(requestBody
        ? {
            requestBody: {
              required: true,
              content: { 'application/json': { schema: schemaOf(requestBody, 'input') } },
            },
          }
        : {}),
    },
  );
}

/**
 * The OpenAPI 3.1 description of every API and operations route (contract section 2),
 * generated from the route table and the zod schemas that validate the requests and shape the
 * answers. Served at /openapi.json; a test lints it and checks every integration test's
 * responses against it.
 */
export function createOpenApiDocument(options: OpenApiOptions): Json {
  const served = (route: RouteSpec) =>
    !route.undocumented && (route.servedWhen === undefined || options[route.servedWhen]);
  const paths: Json = Object.fromEntries(
    ROUTE_TABLE.filter(served).map((route) => [
      route.path,
      { [route.method]: describeRoute(route, options) },
    ]),
  );
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
      schemas: Object.fromEntries(
        Object.entries(SCHEMAS).map(([name, schema]) => [name, schemaOf(schema, 'output')]),
      ),
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

import type { z } from 'zod';
import type { Config } from '../../config/load-config.js';
import { ROUTE_TAGS } from '../features/route-parts.js';
import { ROUTE_TABLE } from '../features/route-table.js';
import {
  isBodyAnswer,
  type NamedSchema,
  type RouteAnswer,
  type RouteSpec,
} from '../http/route-spec.js';
import {
  candidateComponents,
  componentsUsedBy,
  schemaOf,
  schemesUsedBy,
} from './openapi-components.js';
import { readPackageFacts, type PackageFacts } from './package-facts.js';

/** What the document's configured schemas are built with (search's `k` bounds). */
type DocumentContext = { readonly maxK: number };
type Route = RouteSpec<DocumentContext>;

type Json = Record<string, unknown>;

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
const body = (schema: NamedSchema, description: string, media = ['application/json']) => ({
  description,
  content: Object.fromEntries(
    media.map((type) => [type, { schema: { $ref: `#/components/schemas/${schema.name}` } }]),
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
  route: Route,
  responses: Record<string, unknown>,
  errors: number[],
  extra: Json = {},
): Json {
  const all = [...new Set([...errors, ...COMMON])].sort();
  return {
    operationId: route.id,
    summary: route.summary,
    description: route.description,
    tags: [route.tag],
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
  /** METRICS_TOKEN is set: /metrics needs it as a bearer token. */
  metricsToken?: boolean;
  /** Version, license and contact for the document: package.json's, read now if not given. */
  package?: PackageFacts;
}

/** What a gateway with this configuration serves on its public listener. */
export function openApiOptions(config: Config): OpenApiOptions {
  const health = config.opsPort === undefined;
  return {
    maxK: config.search.maxK,
    sessionMode: config.chat.authMode === 'session',
    metrics: health && config.metrics.enabled,
    health,
    metricsToken: config.metrics.token !== undefined,
  };
}

const describeAnswer = (answer: RouteAnswer): Json =>
  isBodyAnswer(answer)
    ? body(answer.body, answer.description, answer.media && [...answer.media])
    : 'type' in answer
      ? plain(answer.media, answer.type, answer.description)
      : { description: answer.description };

/** The security schemes an operation needs, by the route's auth kind (route-spec.ts). */
function securityOf(route: Route, options: OpenApiOptions): Json[] | undefined {
  const needs = {
    none: undefined,
    chatCaller: options.sessionMode ? 'sessionCookie' : undefined,
    session: 'sessionCookie',
    metricsToken: options.metricsToken ? 'metricsToken' : undefined,
  }[route.auth];
  return needs === undefined ? [] : [{ [needs]: [] }];
}

function describeParameters(route: Route, options: OpenApiOptions): Json[] {
  const { path, query } = route.inputs ?? {};
  const querySchema = typeof query === 'function' ? query({ maxK: options.maxK }) : query;
  return [
    ...(path ? parameters(path, 'path') : []),
    ...(querySchema ? parameters(querySchema, 'query') : []),
    ...(route.parameters ?? []),
  ];
}

function describeResponses(route: Route): Json {
  const responses: Json = Object.fromEntries(
    Object.entries(route.answers).map(([status, answer]) => [status, describeAnswer(answer)]),
  );
  if (route.cache) {
    responses['200'] = { ...(responses['200'] as Json), headers: CACHE_HEADERS };
    responses['304'] = NOT_MODIFIED;
  }
  return responses;
}

/** One route of the table as an OpenAPI operation. */
function describeRoute(route: Route, options: OpenApiOptions): Json {
  const security = securityOf(route, options) ?? [];
  const parameterList = describeParameters(route, options);
  const requestBody = route.inputs?.body;
  return operation(
    route,
    describeResponses(route),
    [...route.errors, ...(security.length > 0 ? [401] : [])],
    {
      security,
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

/** The tags of the routes served, in the order their first routes come, each described. */
const tagsOf = (routes: readonly Route[]) =>
  [...new Set(routes.map((route) => route.tag))].map((name) => ({
    name,
    description: ROUTE_TAGS[name],
  }));

/** npm's UNLICENSED (no licence granted) has no SPDX identifier: SPDX's own form for that. */
const licenseOf = (license: string) => ({
  name: license,
  identifier: license === 'UNLICENSED' ? 'LicenseRef-UNLICENSED' : license,
});

/**
 * The OpenAPI 3.1 description of every API and operations route (contract section 2),
 * generated from the route table and the zod schemas that validate the requests and shape the
 * answers. Served at /openapi.json; a test lints it (test/static/openapi-lint.test.ts) and
 * checks every integration test's responses against it.
 */
export function createOpenApiDocument(options: OpenApiOptions): Json {
  const served = (route: Route) =>
    !route.undocumented && (route.servedWhen === undefined || options[route.servedWhen]);
  const routes: readonly Route[] = ROUTE_TABLE.filter(served);
  const paths: Json = Object.fromEntries(
    routes.map((route) => [route.path, { [route.method]: describeRoute(route, options) }]),
  );
  const { version, license, homepage } = options.package ?? readPackageFacts();
  return {
    openapi: '3.1.0',
    info: {
      title: 'BFF gateway',
      version,
      description:
        'The gateway a web frontend calls instead of the chat and search services (GATEWAY-CONTRACT v4).',
      license: licenseOf(license),
      // The schema wants an absolute URL here: only package.json's homepage is one we know.
      contact: { name: 'BFF gateway maintainers', ...(homepage ? { url: homepage } : {}) },
    },
    // Relative: the document describes the listener that serves it, whatever its host.
    servers: [{ url: '/', description: 'This gateway, at the origin that served the document.' }],
    tags: tagsOf(routes),
    paths,
    components: {
      ...componentsUsedBy(paths, candidateComponents(routes)),
      securitySchemes: schemesUsedBy(
        routes.map((route) => securityOf(route, options) ?? []).flat(),
      ),
    },
  };
}

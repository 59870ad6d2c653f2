import { z } from 'zod';
import { STATUS_TITLES } from '../errors/to-problem.js';
import { SCHEMA_NAMES } from '../http/ops-routes.js';
import { isBodyAnswer, type NamedSchema, type RouteSpec } from '../http/route-spec.js';

/*
 * The OpenAPI document's components: every one an operation may refer to (the answers' named
 * schemas, the problem responses, the cache headers, the security schemes), and of those only
 * the ones this document's operations use, since linters flag an unused component.
 */

type Json = Record<string, unknown>;
type Route = RouteSpec<{ readonly maxK: number }>;

/** A zod schema as OpenAPI 3.1 (JSON Schema 2020-12): what a request may send, or what comes back. */
export function schemaOf(schema: z.ZodType, io: 'input' | 'output'): Json {
  const { $schema, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Json;
  void $schema;
  return rest;
}

/** The schemes the route table's auth kinds name (route-spec.ts, RouteAuth). */
const SECURITY_SCHEMES = {
  sessionCookie: {
    type: 'apiKey',
    in: 'cookie',
    // `__Host-bff_session` when the cookie is Secure (the default), `bff_session` otherwise.
    name: '__Host-bff_session',
    description: 'The session cookie `POST /api/auth/login` sets (session mode).',
  },
  metricsToken: {
    type: 'http',
    scheme: 'bearer',
    description: 'METRICS_TOKEN, when it is set.',
  },
} as const;

/** The security schemes some operation of this document needs, and no other. */
export function schemesUsedBy(security: readonly Json[]): Json {
  const used = new Set(security.flatMap(Object.keys));
  return Object.fromEntries(Object.entries(SECURITY_SCHEMES).filter(([name]) => used.has(name)));
}

/** Every schema an answer names, and the problem's: the document's components. */
function componentsOf(routes: readonly Route[]): Json {
  const named = new Map<string, NamedSchema>([['Problem', SCHEMA_NAMES.Problem]]);
  for (const route of routes) {
    for (const answer of Object.values(route.answers)) {
      if (isBodyAnswer(answer)) named.set(answer.body.name, answer.body);
    }
  }
  return Object.fromEntries(
    [...named].map(([name, { schema }]) => [name, schemaOf(schema, 'output')]),
  );
}

/** The problem responses operations may name; only those some operation names are listed. */
const PROBLEM_STATUSES = [400, 401, 403, 404, 405, 406, 413, 415, 429, 500, 502, 503, 504];

/** Every component an operation may refer to; componentsUsedBy keeps those some operation does. */
export function candidateComponents(routes: readonly Route[]): Record<string, Json> {
  return {
    schemas: componentsOf(routes),
    responses: Object.fromEntries(
      PROBLEM_STATUSES.map((status) => [
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
  };
}

/** The component a `$ref` of this document names, if any. */
function componentAt(ref: string, candidates: Record<string, Json>): unknown {
  const [kind = '', name = ''] = ref.replace(/^#\/components\//, '').split('/');
  return candidates[kind]?.[name];
}

/**
 * The components the paths refer to, directly or through another component, in the order of
 * the candidates. A configuration without the routes that name one (no 401 in service mode
 * without METRICS_TOKEN) does not list it: linters flag an unused component.
 */
export function componentsUsedBy(
  paths: Json,
  candidates: Record<string, Json>,
): Record<string, Json> {
  const used = new Set<string>();
  const pending: unknown[] = [paths];
  while (pending.length > 0) {
    const node = pending.pop();
    if (typeof node !== 'object' || node === null) continue;
    const ref = (node as Json)['$ref'];
    if (typeof ref === 'string' && !used.has(ref)) {
      used.add(ref);
      pending.push(componentAt(ref, candidates));
    }
    pending.push(...Object.values(node as Json));
  }
  const usedOf = (kind: string, members: Json) =>
    Object.fromEntries(
      Object.entries(members).filter(([name]) => used.has(`#/components/${kind}/${name}`)),
    );
  return Object.fromEntries(
    Object.entries(candidates)
      .map(([kind, members]) => [kind, usedOf(kind, members)] as const)
      .filter(([, members]) => Object.keys(members).length > 0),
  );
}

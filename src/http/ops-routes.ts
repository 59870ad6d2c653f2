import { ProblemSchema } from '../errors/to-problem.js';
import { HealthBody, ReadinessBody } from '../health/readiness.js';
import { declareRoute, namedSchema } from './route-spec.js';

/*
 * The routes of the gateway's own documents and of operators' tools (contract section 2), in
 * the route table (features/route-table.ts) beside the API's.
 */

/** The schemas of every problem and of the operators' answers, named for the document. */
export const SCHEMA_NAMES = {
  Problem: namedSchema('Problem', ProblemSchema),
  Health: namedSchema('Health', HealthBody),
  Readiness: namedSchema('Readiness', ReadinessBody),
};

/** The tags of these routes, with what each groups (the route table adds the API's). */
export const OPS_TAGS = {
  docs: 'This description of the API, as OpenAPI 3.1 and rendered for a person.',
  operations:
    "Operators' probes and metrics: on this listener when OPS_PORT is unset, on OPS_PORT's alone otherwise.",
} as const;

export const OPENAPI_ROUTE = declareRoute({
  id: 'openapi',
  method: 'get',
  path: '/openapi.json',
  summary: 'This document.',
  description:
    'This description: OpenAPI 3.1 of every route this listener serves in this configuration, generated from the route table and the schemas that validate the requests and shape the answers. Anyone may call it. It is made on its first request and never changes while the gateway runs: a strong `ETag`, and 304 on a matching `If-None-Match`.',
  tag: 'docs',
  answers: {
    200: { description: 'OpenAPI 3.1.', media: 'application/json', type: 'object' },
    304: { description: 'Not modified: the If-None-Match entity-tag is current. No body.' },
  },
  errors: [],
  auth: 'none',
});

export const DOCS_ROUTE = declareRoute({
  id: 'docs',
  method: 'get',
  path: '/docs',
  summary: 'This document, rendered for a person (Swagger UI, served by the gateway).',
  description:
    'This description rendered by Swagger UI for a person. Every script, style and image comes from the gateway itself (no CDN), under a Content-Security-Policy that runs no inline script and loads nothing from another origin. Anyone may call it.',
  tag: 'docs',
  answers: { 200: { description: 'A page.', media: 'text/html', type: 'string' } },
  errors: [],
  auth: 'none',
});

/** Swagger UI's files, served by the gateway (no CDN). */
export const DOCS_ASSET_ROUTE = declareRoute({
  id: 'docsAsset',
  method: 'get',
  path: '/docs/{asset}',
  summary: "One of Swagger UI's files.",
  description:
    "One of the Swagger UI files the page loads, from the gateway's own copy; any other name is 404.",
  tag: 'docs',
  answers: { 200: { description: 'The file.' } },
  errors: [404],
  auth: 'none',
  undocumented: true,
});

export const METRICS_ROUTE = declareRoute({
  id: 'metrics',
  method: 'get',
  path: '/metrics',
  summary: 'Prometheus text format.',
  description:
    "The gateway's metrics in Prometheus text format (contract section 6). With METRICS_TOKEN set it needs `Authorization: Bearer` with that token: a missing or wrong one is 401 with `WWW-Authenticate: Bearer`. On this listener only with METRICS on and OPS_PORT unset.",
  tag: 'operations',
  answers: { 200: { description: 'Metrics.', media: 'text/plain', type: 'string' } },
  errors: [],
  auth: 'metricsToken',
  servedWhen: 'metrics',
});

export const HEALTH_ROUTE = declareRoute({
  id: 'health',
  method: 'get',
  path: '/healthz',
  summary: 'Alive.',
  description:
    'Liveness: 200 `{"status": "ok"}` whenever the process answers. Anyone may call it. On this listener only when OPS_PORT is unset.',
  tag: 'operations',
  answers: { 200: { description: 'Alive.', body: SCHEMA_NAMES.Health } },
  errors: [],
  auth: 'none',
  servedWhen: 'health',
});

export const READINESS_ROUTE = declareRoute({
  id: 'readiness',
  method: 'get',
  path: '/readyz',
  summary: 'Ready to serve (degraded counts as ready).',
  description:
    'Readiness: 200 with `status` `ok`, or `degraded` while the gateway serves without something it can do without (Redis: the cache then misses), `checks` saying which; 503 with `status: draining` from the moment a stop begins. Anyone may call it. On this listener only when OPS_PORT is unset.',
  tag: 'operations',
  answers: {
    200: { description: 'Ready.', body: SCHEMA_NAMES.Readiness },
    503: { description: 'Draining.', body: SCHEMA_NAMES.Readiness },
  },
  errors: [],
  auth: 'none',
  servedWhen: 'health',
});

/** In the order the OpenAPI document lists them. */
export const OPS_ROUTES = [
  OPENAPI_ROUTE,
  DOCS_ROUTE,
  DOCS_ASSET_ROUTE,
  METRICS_ROUTE,
  HEALTH_ROUTE,
  READINESS_ROUTE,
] as const satisfies readonly { readonly tag: keyof typeof OPS_TAGS }[];

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

export const OPENAPI_ROUTE = declareRoute({
  id: 'openapi',
  method: 'get',
  path: '/openapi.json',
  summary: 'This document.',
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
] as const;

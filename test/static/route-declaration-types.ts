/*
 * Decisions a route of the table cannot leave out: `npm run typecheck` compiles this file, and
 * each `@ts-expect-error` below fails the check if its declaration ever compiles (an unused
 * directive is an error). The runtime half is test/static/route-declarations.test.ts.
 */
import { z } from 'zod';
import { declareRouteFor, namedSchema } from '../../src/http/route-spec.js';
import type { RouteContext } from '../../src/features/route-context.js';

const declareRoute = declareRouteFor<RouteContext>();
const Answer = namedSchema('Answer', z.object({ ok: z.boolean() }));
const windows = { ttlSeconds: 1, staleSeconds: 1, staleIfErrorSeconds: 1 };

/** The route as it must be written: every decision stated. */
export const complete = declareRoute({
  id: 'complete',
  method: 'get',
  path: '/api/complete',
  summary: 'Complete.',
  description: 'A route of this file.',
  tag: 'test',
  answers: { 200: { description: 'Yes.', body: Answer } },
  errors: [],
  auth: 'chatCaller',
  cache: {
    resource: 'complete',
    scope: 'user',
    version: 1,
    upstream: 'chat',
    windows,
    key: (_input: unknown, { realm }: RouteContext) => [realm],
  },
});

// @ts-expect-error a route that does not say which tag lists it in the OpenAPI document
export const noTag = declareRoute({
  id: 'noTag',
  method: 'get',
  path: '/api/no-tag',
  summary: 'No tag.',
  description: 'A route of this file.',
  answers: { 200: { description: 'Yes.', body: Answer } },
  errors: [],
  auth: 'none',
});

// @ts-expect-error a route that does not describe itself
export const noDescription = declareRoute({
  id: 'noDescription',
  method: 'get',
  path: '/api/no-description',
  summary: 'No description.',
  tag: 'test',
  answers: { 200: { description: 'Yes.', body: Answer } },
  errors: [],
  auth: 'none',
});

// @ts-expect-error a route that does not say who may call it
export const noAuth = declareRoute({
  id: 'noAuth',
  method: 'get',
  path: '/api/no-auth',
  summary: 'No auth decision.',
  description: 'A route of this file.',
  tag: 'test',
  answers: { 200: { description: 'Yes.', body: Answer } },
  errors: [],
});

export const noScope = declareRoute({
  id: 'noScope',
  method: 'get',
  path: '/api/no-scope',
  summary: 'A cached route that does not say whose answer it is.',
  description: 'A route of this file.',
  tag: 'test',
  answers: { 200: { description: 'Yes.', body: Answer } },
  errors: [],
  auth: 'chatCaller',
  // @ts-expect-error a cache policy without a scope
  cache: {
    resource: 'no_scope',
    version: 1,
    upstream: 'chat',
    windows,
    key: (_input: unknown, { realm }: RouteContext) => [realm],
  },
});

export const stringSchema = declareRoute({
  id: 'stringSchema',
  method: 'get',
  path: '/api/string-schema',
  summary: 'An answer schema named by a string, not by reference.',
  description: 'A route of this file.',
  tag: 'test',
  // @ts-expect-error a body must be a named schema object
  answers: { 200: { description: 'Yes.', body: 'Answer' } },
  errors: [],
  auth: 'none',
});

export const unknownAuth = declareRoute({
  id: 'unknownAuth',
  method: 'get',
  path: '/api/unknown-auth',
  summary: 'An auth kind no guard exists for.',
  description: 'A route of this file.',
  tag: 'test',
  answers: { 200: { description: 'Yes.', body: Answer } },
  errors: [],
  // @ts-expect-error only the kinds of RouteAuth
  auth: true,
});

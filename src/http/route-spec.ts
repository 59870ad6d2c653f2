import type { NextFunction, Request, Response, Router } from 'express';
import type { z } from 'zod';
import { parseInput } from '../errors/validation-error.js';
import { methodNotAllowed } from './error-handler.js';

/*
 * A route declared once: its method, path template, inputs, answers, cacheability and auth.
 * The Express routers mount it with `mountRoute`, the OpenAPI document describes it, and the
 * metrics' route labels match its template, all from the same declaration (the route table:
 * features/route-table.ts).
 */

export type RouteMethod = 'get' | 'post' | 'delete';

/** A success answer: a body of a named schema (by default JSON), another media type, or none. */
export type RouteAnswer =
  | {
      readonly description: string;
      /** The schema's name among the document's components (route-table.ts, SCHEMAS). */
      readonly body: string;
      readonly media?: readonly string[];
    }
  | { readonly description: string; readonly media: string; readonly type: 'string' | 'object' }
  | { readonly description: string };

/** A query schema that depends on the configuration (search's `k` is bounded by SEARCH_MAX_K). */
export type ConfiguredSchema = (maxK: number) => z.ZodType;

export interface RouteSpec {
  /** The OpenAPI operationId. */
  readonly id: string;
  readonly method: RouteMethod;
  /** The path template as OpenAPI writes it, `{name}` for a path parameter. */
  readonly path: string;
  readonly summary: string;
  readonly description?: string;
  /**
   * Validated in this order before the handler runs, except a configured query schema, which
   * the handler applies itself (search negotiates its format first, and reuses what the hit
   * path parsed).
   */
  readonly inputs?: {
    readonly path?: z.ZodType;
    readonly query?: z.ZodType | ConfiguredSchema;
    readonly body?: z.ZodType;
  };
  /** Parameters the schemas above do not cover (a header, a signature), as OpenAPI writes them. */
  readonly parameters?: readonly Readonly<Record<string, unknown>>[];
  readonly answers: Readonly<Record<string, RouteAnswer>>;
  /** The problems it may answer besides every route's (405, 429, 500, 503). */
  readonly errors: readonly number[];
  /** Answered from the cache: `ETag`, `X-Cache`, `Cache-Status`, and 304 on a current validator. */
  readonly cached?: boolean;
  /** Calls the chat server as the caller: in session mode it answers 401 without a session. */
  readonly auth?: boolean;
  /** Served only in this configuration (otherwise always). */
  readonly servedWhen?: 'sessionMode' | 'metrics' | 'health';
  /** Left out of the OpenAPI document (static assets). */
  readonly undocumented?: boolean;
}

/** Declares a route, keeping the literal types of its schemas for its handler's input. */
export const declareRoute = <const S extends RouteSpec>(spec: S): S => spec;

type Parsed<T> = T extends z.ZodType ? z.output<T> : undefined;
type Inputs<S extends RouteSpec> = NonNullable<S['inputs']>;

/** What the handler gets: each input its schema validated, `undefined` where there is none. */
export interface RouteInput<S extends RouteSpec> {
  path: Parsed<Inputs<S>['path']>;
  query: Parsed<Inputs<S>['query']>;
  body: Parsed<Inputs<S>['body']>;
}

export type RouteHandler<S extends RouteSpec> = (
  req: Request,
  res: Response,
  input: RouteInput<S>,
  next: NextFunction,
) => void | Promise<void>;

/** `/api/chat/users/{email}` as Express writes it: `/api/chat/users/:email`. */
export function expressPath(template: string): string {
  return template.replace(/\{([^}]+)\}/g, ':$1');
}

const parsed = (schema: unknown, value: unknown, location: 'path' | 'query' | 'body') =>
  typeof schema === 'object' && schema !== null
    ? parseInput(schema as z.ZodType, value, location)
    : undefined;

/**
 * Mounts `spec` on `router`: its method runs the handler with the inputs validated (a 400
 * envelope before the handler otherwise), any other method is a 405 with `Allow`.
 */
export function mountRoute<S extends RouteSpec>(
  router: Router,
  spec: S,
  handler: RouteHandler<S>,
): void {
  const inputs = spec.inputs ?? {};
  const route = router.route(expressPath(spec.path));
  route[spec.method]((req: Request, res: Response, next: NextFunction) => {
    const input = {
      path: parsed(inputs.path, req.params, 'path'),
      query: parsed(inputs.query, req.query, 'query'),
      body: parsed(inputs.body, req.body, 'body'),
    } as RouteInput<S>;
    return handler(req, res, input, next);
  });
  route.all(methodNotAllowed([spec.method.toUpperCase()]));
}

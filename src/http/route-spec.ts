import type { NextFunction, Request, Response } from 'express';
import type { z } from 'zod';

/*
 * A route declared once: its method, path template, inputs, answers, who may call it and, for
 * a cached route, its cache policy. Everything else follows from the declaration: the mounting
 * and validation (route-mount.ts), the auth guard, the hit path and the cache plumbing
 * (cached-route.ts), the metrics' labels, the variables of its cache windows and the OpenAPI
 * document. The route table (features/route-table.ts) holds every declaration.
 */

export type RouteMethod = 'get' | 'post' | 'delete';

/** A schema the OpenAPI document names among its components, so clients get a type name. */
export interface NamedSchema<T extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly schema: T;
}

/** Names a schema for the document: routes refer to it by this object, never by the string. */
export const namedSchema = <T extends z.ZodType>(name: string, schema: T): NamedSchema<T> =>
  Object.freeze({ name, schema });

/** An answer whose body a named schema shapes (by default JSON). */
export interface BodyAnswer {
  readonly description: string;
  readonly body: NamedSchema;
  /** More than one: the request's Accept chooses, and the answer varies on it. */
  readonly media?: readonly string[];
}

/** A success answer: a body of a named schema, another media type, or none. */
export type RouteAnswer =
  | BodyAnswer
  | {
      readonly description: string;
      readonly media: string;
      readonly type: 'string' | 'object';
      readonly body?: never;
    }
  | { readonly description: string; readonly body?: never; readonly media?: never };

/**
 * Who may call a route, each named as the OpenAPI document's security scheme will be:
 * - `none`: anyone;
 * - `chatCaller`: the route calls the chat server as its caller: in `session` mode the session
 *   cookie (`sessionCookie`, 401 without), in `service` mode the service account;
 * - `session`: the session cookie, in `session` mode (`sessionCookie`);
 * - `metricsToken`: `Authorization: Bearer` with METRICS_TOKEN when it is set (`metricsToken`).
 * A mounted route runs its guard before its handler: there is no way to forget it.
 */
export type RouteAuth = 'none' | 'chatCaller' | 'session' | 'metricsToken';

/** Whether a cached answer is the same for everyone, or each caller's own (contract section 4). */
export type CacheScope = 'shared' | 'user';

/** Seconds, as the route's variables default them (`{RESOURCE}_CACHE_TTL_SECONDS`, …). */
export interface CacheWindowDefaults {
  readonly ttlSeconds: number;
  readonly staleSeconds: number;
  readonly staleIfErrorSeconds: number;
}

/**
 * How a route's answers are cached. `C` is the runtime context the routes are mounted with
 * (the realm, the link signing key): what a key needs besides the request.
 */
export interface CachePolicy<I, C> {
  /** The metrics' `resource` label, the first part of every key, and its variables' prefix. */
  readonly resource: string;
  /**
   * `shared`: one entry answers everyone. `user`: one entry per chat user id in `session`
   * mode, the service account's one in `service` mode; never served past TTL plus stale.
   */
  readonly scope: CacheScope;
  /** Bump when the stored representation changes shape, so old entries are never served. */
  readonly version: number;
  /** The upstream a miss calls: a collapsed miss waits at most half of its deadline. */
  readonly upstream: 'chat' | 'search';
  readonly windows: CacheWindowDefaults;
  /**
   * The key's parts, from the validated input: normalised values only. The last part is the
   * Redis Cluster hash tag (the entry, its fleet lock and its waiters share one slot).
   */
  key(input: I, context: C): readonly string[];
}

/** A query schema that depends on the runtime context (search's `k` on SEARCH_MAX_K). */
// A method's parameter is checked bivariantly: a table of routes of one context is a table of routes.
export type ConfiguredSchema<C> = { configure(context: C): z.ZodType }['configure'];

export interface RouteInputs<C> {
  readonly path?: z.ZodType;
  readonly query?: z.ZodType | ConfiguredSchema<C>;
  readonly body?: z.ZodType;
}

export interface RouteSpec<C = never> {
  /** The OpenAPI operationId. */
  readonly id: string;
  readonly method: RouteMethod;
  /** The path template as OpenAPI writes it, `{name}` for a path parameter. */
  readonly path: string;
  readonly summary: string;
  /** What it does, who may call it, how it is cached, what its errors mean: a paragraph. */
  readonly description: string;
  /**
   * The OpenAPI tag it is listed under, one of the route table's (ROUTE_TAGS in
   * features/route-parts.ts), which also says what the tag groups.
   */
  readonly tag: string;
  /** Validated once per request, before the guard and the handler; a 400 otherwise. */
  readonly inputs?: RouteInputs<C>;
  /** Parameters the schemas above do not cover (a header, a signature), as OpenAPI writes them. */
  readonly parameters?: readonly Readonly<Record<string, unknown>>[];
  readonly answers: Readonly<Record<string, RouteAnswer>>;
  /** The problems it may answer besides every route's (405, 429, 500, 503) and its guard's. */
  readonly errors: readonly number[];
  readonly auth: RouteAuth;
  /** Answered from the cache: `ETag`, `X-Cache`, `Cache-Status`, and 304 on a current validator. */
  // The key function's input is checked against the route's own inputs by declareRoute.
  readonly cache?: CachePolicy<never, C>;
  /** Served only in this configuration (otherwise always). */
  readonly servedWhen?: 'sessionMode' | 'metrics' | 'health';
  /** Left out of the OpenAPI document (static assets). */
  readonly undocumented?: boolean;
}

type Parsed<T, C> = T extends z.ZodType
  ? z.output<T>
  : T extends ConfiguredSchema<C>
    ? z.output<ReturnType<T>>
    : undefined;

/** The media types a route's 200 may be sent as, when the request's Accept chooses. */
type Negotiated<S> = S extends { answers: { 200: { media: readonly (infer M)[] } } }
  ? M
  : undefined;

type InputsOf<S> = S extends { inputs: infer I } ? I : Record<never, never>;
type ContextOf<S> = S extends RouteSpec<infer C> ? C : never;

/** What the handler gets: each input its schema validated, `undefined` where there is none. */
export interface RouteInput<S> {
  readonly path: Parsed<InputsOf<S> extends { path: infer P } ? P : undefined, ContextOf<S>>;
  readonly query: Parsed<InputsOf<S> extends { query: infer Q } ? Q : undefined, ContextOf<S>>;
  readonly body: Parsed<InputsOf<S> extends { body: infer B } ? B : undefined, ContextOf<S>>;
  /** The media type the request's Accept chose among the 200's, when there is a choice. */
  readonly accept: Negotiated<S>;
}

/**
 * Declares a route of the table, keeping the literal types of its schemas for its handler's
 * input. A cache policy's key states the input it reads; mounting checks it against the
 * route's own (route-mounter.ts, mountCached).
 */
export const declareRouteFor =
  <C>() =>
  <const S extends RouteSpec<C>>(spec: S): S =>
    spec;

/** A route with no runtime context (the operations routes). */
export const declareRoute = declareRouteFor<never>();

export type RouteHandler<S> = (
  req: Request,
  res: Response,
  input: RouteInput<S>,
  next: NextFunction,
) => void | Promise<void>;

/** `/api/chat/users/{email}` as Express writes it: `/api/chat/users/:email`. */
export function expressPath(template: string): string {
  return template.replace(/\{([^}]+)\}/g, ':$1');
}

export const isBodyAnswer = (answer: RouteAnswer | undefined): answer is BodyAnswer =>
  answer?.body !== undefined;

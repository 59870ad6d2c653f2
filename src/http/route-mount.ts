import type { IncomingMessage } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import accepts from 'accepts';
import { LRUCache } from 'lru-cache';
import type { NextFunction, Request, Response, Router } from 'express';
import type { z } from 'zod';
import { AppError } from '../errors/app-error.js';
import { parseInput } from '../errors/validation-error.js';
import { methodNotAllowed } from './error-handler.js';
import {
  expressPath,
  isBodyAnswer,
  type RouteAuth,
  type RouteInput,
  type RouteSpec,
} from './route-spec.js';

/*
 * What a declaration decides, done once per request: its inputs validated (whichever of the hit
 * path and the route reads the request first, the other reuses the result), its Accept
 * negotiated, and its guard run before the handler.
 */

/** Who may call a route of one `auth` kind, and how its work runs as that caller. */
export interface RouteGuard<A> {
  /**
   * Who the request acts as, without answering anything; undefined where it may not call. At
   * once when the guard needs no lookup (the service account), so a hit waits for nothing.
   */
  peek(req: IncomingMessage): A | undefined | Promise<A | undefined>;
  /** The problem for a request `peek` refused (a 401, clearing a stale cookie). */
  refuse(req: Request, res: Response): Error;
  /** Whose entry a per-user cached answer is: the chat user's id, or the shared account's. */
  owner(admitted: A): string;
  /** Runs the route's work as the caller (chat: a refusal of its key ends its session). */
  run<T>(req: Request, res: Response, admitted: A, work: () => Promise<T>): Promise<T>;
}

export type Guarded = Exclude<RouteAuth, 'none'>;
/** The guards a gateway mounts with, by auth kind; a route's kind needs its guard. */
export type RouteGuards = { readonly [K in Guarded]?: RouteGuard<unknown> };

/** What a guard admitted for a route of this auth kind. */
export type AdmittedBy<G extends RouteGuards, K extends RouteAuth> = K extends Guarded
  ? G[K] extends RouteGuard<infer A>
    ? A
    : never
  : undefined;

/** A request's validated input: computed once, then shared by the hit path and the route. */
// The input's type is the route's; one reader holds one route's requests.
type Prepared = { readonly input: RouteInput<never> } | { readonly error: unknown };

/**
 * Where a request keeps its validated input between the hit path and the route: a property of
 * the request, as `req.admission` is, rather than a WeakMap entry per request.
 */
const PREPARED = Symbol('prepared input');
interface PreparedSlot {
  [PREPARED]?: { readonly reader: unknown; readonly result: Prepared };
}

/** The media types a route's 200 may be sent as, when the Accept header chooses. */
export function negotiatedMedia(spec: RouteSpec<unknown>): readonly string[] | undefined {
  const answer = spec.answers['200'];
  const media = isBodyAnswer(answer) ? answer.media : undefined;
  return media !== undefined && media.length > 1 ? media : undefined;
}

/** The answer's `Vary` beyond CORS's `Origin`: `Accept` when the Accept header chooses. */
export const varyOf = (spec: RouteSpec<unknown>): string | undefined =>
  negotiatedMedia(spec) ? 'Accept' : undefined;

function negotiate(req: IncomingMessage, media: string[]): string {
  // No preference is by far the common case: the first type, as negotiation would pick.
  if (req.headers.accept === undefined) return media[0] as string;
  const type = accepts(req).type(media) as string | false;
  if (type === false) {
    throw new AppError('NOT_ACCEPTABLE', `This route answers ${media.join(' or ')}.`);
  }
  return type;
}

/** Raw query strings a reader remembers (seen once, validated), and the longest it keys by. */
const REMEMBERED_QUERIES = 1024;
const REMEMBERED_QUERY_CHARS = 512;

/**
 * The validated query of a raw query string, remembered for strings asked more than once
 * lately: a popular search is validated (and so keyed, route-context.ts) once, not on every
 * hit. A string is only noted the first time (a search nobody repeats, most of a long tail,
 * keeps no validated input alive), and its input kept from the second. The schema's output
 * depends on the string alone; it is frozen and shared by every request that sends the same
 * string. Only valid queries are kept.
 */
function rememberedQueries(schema: z.ZodType) {
  const seen = new LRUCache<string, true>({ max: REMEMBERED_QUERIES });
  const known = new LRUCache<string, object>({ max: REMEMBERED_QUERIES });
  const validate = (rawQuery: string) => parseInput(schema, parseQuery(rawQuery), 'query');
  return (rawQuery: string): unknown => {
    if (rawQuery.length > REMEMBERED_QUERY_CHARS) return validate(rawQuery);
    let query = known.get(rawQuery);
    if (query !== undefined) return query;
    if (!seen.has(rawQuery)) {
      seen.set(rawQuery, true);
      return validate(rawQuery);
    }
    query = Object.freeze(validate(rawQuery) as object);
    known.set(rawQuery, query);
    return query;
  };
}

const parsedAt = (
  schema: z.ZodType | undefined,
  value: unknown,
  location: 'path' | 'query' | 'body',
) => (schema === undefined ? undefined : parseInput(schema, value, location));

/**
 * Validates one route's requests with its declared schemas, the configured ones built once
 * with the context. `query` is the raw query string when Express has not parsed it yet (the
 * hit path): Express 5's default ("simple") parser is node:querystring, the same input.
 */
export function createInputReader<C>(spec: RouteSpec<C>, context: C) {
  const { path, query, body } = spec.inputs ?? {};
  const querySchema = typeof query === 'function' ? query(context) : query;
  const negotiated = negotiatedMedia(spec);
  const media = negotiated && [...negotiated];
  const fromRaw = querySchema && rememberedQueries(querySchema);
  const read = (req: IncomingMessage, rawQuery?: string): Prepared => {
    // Express's request once the router has it; the hit path's reads the raw query only.
    const express = req as Partial<Request>;
    try {
      const accept = media && negotiate(req, media);
      const input = {
        path: parsedAt(path, express.params, 'path'),
        query:
          rawQuery === undefined || fromRaw === undefined
            ? parsedAt(querySchema, express.query, 'query')
            : fromRaw(rawQuery),
        body: parsedAt(body, express.body, 'body'),
        accept,
      };
      return { input: input as RouteInput<never> };
    } catch (error) {
      return { error };
    }
  };
  return {
    querySchema,
    /** The request's input, read once; `error` is the problem the route answers instead. */
    prepare(req: IncomingMessage & PreparedSlot, rawQuery?: string): Prepared {
      // A request meets one route: the slot is this reader's when it holds this reader's read.
      const held = req[PREPARED];
      if (held?.reader === read) return held.result;
      const result = read(req, rawQuery);
      req[PREPARED] = { reader: read, result };
      return result;
    },
  };
}

/** The input, or the validation problem thrown. */
export function inputOf<S>(prepared: Prepared): RouteInput<S> {
  if ('error' in prepared) throw prepared.error;
  return prepared.input;
}

/** Runs a route's guard once per request: the hit path's peek is the route's too. */
export function createAdmission<A>(guard: RouteGuard<A>) {
  // Only a lookup is remembered: an answer at once costs less than remembering it.
  const peeked = new WeakMap<IncomingMessage, Promise<A | undefined>>();
  const peek = (req: IncomingMessage): A | undefined | Promise<A | undefined> => {
    const known = peeked.get(req);
    if (known !== undefined) return known;
    const result = guard.peek(req);
    if (result instanceof Promise) peeked.set(req, result);
    return result;
  };
  return {
    guard,
    peek,
    async admit(req: Request, res: Response): Promise<A> {
      const admitted = await peek(req);
      if (admitted === undefined) throw guard.refuse(req, res);
      return admitted;
    },
  };
}

/** The guard a route's auth kind needs; a route whose guard was not given fails at start-up. */
export function guardOf(
  spec: RouteSpec<unknown>,
  guards: RouteGuards,
): RouteGuard<unknown> | undefined {
  if (spec.auth === 'none') return undefined;
  const guard = guards[spec.auth];
  if (guard === undefined) {
    throw new Error(`route ${spec.id} needs the ${spec.auth} guard, and none was given`);
  }
  return guard;
}

/** Mounts a route's method on `router`; any other method is a 405 with `Allow`. */
export function mountMethod(
  router: Router,
  spec: RouteSpec<unknown>,
  handle: (req: Request, res: Response, next: NextFunction) => void | Promise<void>,
): void {
  const route = router.route(expressPath(spec.path));
  route[spec.method](handle);
  route.all(methodNotAllowed([spec.method.toUpperCase()]));
}

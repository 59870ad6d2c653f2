import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, Response, Router } from 'express';
import type { CacheWindows } from '../../config/load-config.js';
import { releaseBody, type Representation } from '../cache/cache-entry.js';
import type { CachedLoader } from '../cache/cached-loader.js';
import type { CachedRoute } from './hit-path.js';
import {
  createAdmission,
  createInputReader,
  guardOf,
  inputOf,
  mountMethod,
  varyOf,
  type AdmittedBy,
  type RouteGuard,
  type RouteGuards,
} from './route-mount.js';
import type { CachePolicy, RouteInput, RouteSpec } from './route-spec.js';
import { sendRepresentation } from './send-representation.js';

/*
 * Mounts the route table's declarations. A plain route's handler gets its validated input and
 * its caller; a cached route's handler is only the upstream call and the transform: the key,
 * the caller's scope, the read-through, the answer's headers and the hit path's entry all come
 * from its cache policy.
 */

/** What a route handler gets: the validated input and who its guard admitted. */
export type GuardedInput<S, A> = RouteInput<S> & { readonly caller: A };

/** An uncached route's handler: it answers the request itself. */
export type RouteHandler<S, A> = (
  req: Request,
  res: Response,
  input: GuardedInput<S, A>,
) => void | Promise<void>;

/** A cached route's work on a miss: the upstream call and the transform to the stored bytes. */
export type CachedLoad<S, A> = (
  input: GuardedInput<S, A>,
  req: IncomingMessage,
) => Promise<Representation>;

export interface RouteMounterOptions<C, G extends RouteGuards> {
  /** What configured schemas and cache keys are built with (route-table.ts, RouteContext). */
  context: C;
  guards: G;
  /** What cached routes need: routes without a cache policy are mounted without it. */
  cache?: {
    /** The read-through every cached route uses. */
    loader: CachedLoader;
    /** A cached resource's windows, as its variables set them (config.cache). */
    windows(resource: string): CacheWindows;
  };
}

export interface RouteMounter<C, G extends RouteGuards> {
  mount<S extends RouteSpec<C>>(
    router: Router,
    spec: S,
    handler: RouteHandler<S, AdmittedBy<G, S['auth']>>,
  ): void;
  mountCached<S extends RouteSpec<C>>(
    router: Router,
    spec: S,
    load: CachedLoad<S, AdmittedBy<G, S['auth']>>,
  ): void;
  /**
   * A cached route's entry for work outside a request of its own (the first screen, the chat
   * events' refresh): the same key and windows its requests use.
   */
  entryOf<S extends RouteSpec<C>>(spec: S): CachedEntry<S>;
  /** The cached routes mounted so far: what the hit path answers before Express. */
  readonly cachedRoutes: readonly CachedRoute[];
  /** The guards routes are mounted with: work outside a route (the first screen) uses them too. */
  readonly guards: G;
}

export interface CachedEntry<S> {
  /** The entry's key; `owner` is the guard's owner of the caller for a per-user route. */
  key(input: RouteInput<S>, owner?: string): string;
  readonly windows: CacheWindows;
}

/** `{resource}:v{version}:{parts}:{tag}`, the tag in braces (one Redis Cluster slot). */
export function cacheKey(
  policy: CachePolicy<never, unknown>,
  parts: readonly string[],
  owner: string | undefined,
): string {
  let key = `${policy.resource}:v${policy.version}:`;
  const last = parts.length - 1;
  for (let i = 0; i < last; i += 1) key += `${parts[i]}:`;
  const tag = parts[last] ?? '';
  return owner === undefined ? `${key}{${tag}}` : `${key}{${tag}:user=${owner}}`;
}

/** A per-user entry is never served past its TTL plus stale window (contract section 2). */
const scoped = (policy: CachePolicy<never, unknown>, windows: CacheWindows): CacheWindows =>
  policy.scope === 'user' ? { ...windows, staleIfErrorSeconds: 0 } : windows;

export function createRouteMounter<C, G extends RouteGuards>(
  options: RouteMounterOptions<C, G>,
): RouteMounter<C, G> {
  const cachedRoutes: CachedRoute[] = [];

  function entryOf<S extends RouteSpec<C>>(spec: S): CachedEntry<S> {
    const policy = spec.cache;
    if (policy === undefined || options.cache === undefined) {
      throw new Error(`route ${spec.id} has no cache policy, or the mounter no cache`);
    }
    return {
      key: (input, owner) => cacheKey(policy, policy.key(input as never, options.context), owner),
      windows: scoped(policy, options.cache.windows(policy.resource)),
    };
  }

  function parts<S extends RouteSpec<C>>(spec: S) {
    const reader = createInputReader<C>(spec, options.context);
    const guard = guardOf(spec, options.guards);
    const admission = guard && createAdmission(guard);
    const admit = (req: Request, res: Response) =>
      admission ? admission.admit(req, res) : Promise.resolve(undefined);
    return { reader, guard, admission, admit };
  }

  return {
    cachedRoutes,
    guards: options.guards,
    entryOf,
    mount(router, spec, handler) {
      const { reader, guard, admit } = parts(spec);
      mountMethod(router, spec, async (req, res) => {
        const input = inputOf<typeof spec>(reader.prepare(req));
        const caller = await admit(req, res);
        const guarded = { ...input, caller } as GuardedInput<typeof spec, never>;
        await (guard
          ? guard.run(req, res, caller, async () => handler(req, res, guarded))
          : handler(req, res, guarded));
      });
    },
    mountCached(router, spec, load) {
      const policy = spec.cache;
      const cache = options.cache;
      if (policy === undefined || cache === undefined) {
        throw new Error(`route ${spec.id} is mounted cached without a cache policy or a cache`);
      }
      const { reader, guard, admission, admit } = parts(spec);
      if (policy.scope === 'user' && guard === undefined) {
        throw new Error(`route ${spec.id} caches per user, but has no caller to tell apart`);
      }
      const entry = entryOf(spec);
      const { windows } = entry;
      const vary = varyOf(spec);
      const keyOf = (input: RouteInput<typeof spec>, caller: unknown) =>
        entry.key(input, policy.scope === 'user' ? ownerOf(guard, caller) : undefined);

      // The route's answer once the hit path has admitted the request and read its entry.
      // Express's router runs it for a guarded route (its guard works on Express's request);
      // the hit path runs it itself for an open one, whose answer needs nothing Express adds.
      const answer = async (req: IncomingMessage, res: ServerResponse) => {
        const input = inputOf<typeof spec>(reader.prepare(req));
        const caller = guard ? await admit(req as Request, res as Response) : undefined;
        const key = keyOf(input, caller);
        // The hit path read this entry already when it admitted the request.
        const read = req.admission?.read;
        const guarded = { ...input, caller } as GuardedInput<typeof spec, never>;
        const work = () =>
          cache.loader.get(key, windows, () => load(guarded, req), {
            log: req.log,
            ...(read?.key === key ? { known: read } : {}),
          });
        const result = await (guard
          ? guard.run(req as Request, res as Response, caller, work)
          : work());
        sendRepresentation(req, res, result.representation, {
          ...result,
          ...(vary ? { vary } : {}),
        });
        // Sent (a compression under way holds its own reference): the route's frames, often
        // promoted by now, keep nothing outside V8's heap until the next full collection.
        releaseBody(result.representation);
      };
      mountMethod(router, spec, answer);

      cachedRoutes.push(
        hitEntry(spec.path, vary, reader, admission, keyOf, guard ? undefined : answer),
      );
    },
  };
}

/** The key, or nothing for a request that cannot have one (a forged cursor: the route answers). */
function keyOrNothing<I>(
  keyOf: (input: I, caller: unknown) => string,
  input: I,
  caller: unknown,
): string | undefined {
  try {
    return keyOf(input, caller);
  } catch {
    return undefined;
  }
}

/**
 * A cached route as the hit path reads it: the same validated input, the same guard's lookup
 * of the caller and the same key as the route's own, each made once per request.
 */
function hitEntry<I>(
  path: string,
  vary: string | undefined,
  reader: { prepare(req: IncomingMessage, query?: string): { input: I } | { error: unknown } },
  admission: { peek(req: IncomingMessage): unknown } | undefined,
  keyOf: (input: I, caller: unknown) => string,
  answer: CachedRoute['answer'],
): CachedRoute {
  return {
    path,
    ...(vary ? { vary } : {}),
    ...(answer ? { answer } : {}),
    keyOf(req, query) {
      const prepared = reader.prepare(req, query);
      if ('error' in prepared) return undefined;
      const { input } = prepared;
      if (admission === undefined) return keyOrNothing(keyOf, input, undefined);
      const caller = admission.peek(req);
      if (!(caller instanceof Promise)) {
        return caller === undefined ? undefined : keyOrNothing(keyOf, input, caller);
      }
      return caller.then((found) =>
        found === undefined ? undefined : keyOrNothing(keyOf, input, found),
      );
    },
  };
}

const ownerOf = (guard: RouteGuard<unknown> | undefined, caller: unknown): string =>
  (guard as RouteGuard<unknown>).owner(caller);

/**
 * Mounts a route without a runtime context (the operations routes), its guard given here when
 * its auth kind needs one.
 */
export function mountRoute<S extends RouteSpec<never>, G extends RouteGuards = RouteGuards>(
  router: Router,
  spec: S,
  handler: RouteHandler<S, AdmittedBy<G, S['auth']>>,
  guards?: G,
): void {
  createRouteMounter<never, G>({ context: undefined as never, guards: guards ?? ({} as G) }).mount(
    router,
    spec,
    handler,
  );
}

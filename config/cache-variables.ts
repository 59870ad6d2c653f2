import { z } from 'zod';
import { integer } from './env-values.js';

/*
 * The variables of each cached route's windows, derived from its declaration in the route table
 * (src/features/route-table.ts, `cache`): a new cached route brings its variables with it, and
 * nothing here names a route. The configuration layer imports no route: the table is handed in.
 */

/** Seconds a cached resource's entries stay fresh, stale, and usable on an upstream error. */
export interface CacheWindows {
  readonly ttlSeconds: number;
  readonly staleSeconds: number;
  readonly staleIfErrorSeconds: number;
}

/** What the configuration reads of a route: its cache resource and default windows, if cached. */
export interface DeclaresCache {
  readonly cache?:
    | {
        readonly resource: string;
        /** `user`: one caller's answer, never served past TTL plus stale (no error window). */
        readonly scope: 'shared' | 'user';
        readonly windows: CacheWindows;
      }
    | undefined;
}

type Declared = NonNullable<DeclaresCache['cache']>;

const SUFFIXES = {
  ttlSeconds: 'TTL_SECONDS',
  staleSeconds: 'STALE_SECONDS',
  staleIfErrorSeconds: 'STALE_IF_ERROR_SECONDS',
} as const satisfies Record<keyof CacheWindows, string>;

const WINDOW = integer(0, 86_400);

/** `channel_folders` → `CHANNEL_FOLDERS_CACHE_TTL_SECONDS`, … */
export const cacheVariable = (resource: string, window: keyof CacheWindows): string =>
  `${resource.toUpperCase()}_CACHE_${SUFFIXES[window]}`;

/** The cached resources of a route table, each once. */
function resourcesOf(routes: readonly DeclaresCache[]) {
  const seen = new Map<string, Declared>();
  for (const { cache } of routes) if (cache) seen.set(cache.resource, cache);
  return [...seen];
}

/** The windows a resource has variables for: a per-user one has no error window. */
const windowsOf = (declared: Declared) =>
  (Object.keys(SUFFIXES) as (keyof CacheWindows)[]).filter(
    (window) => declared.scope === 'shared' || window !== 'staleIfErrorSeconds',
  );

/** Each cached resource's three variables, with the declaration's windows as defaults. */
export function cacheVariableSchemas(routes: readonly DeclaresCache[]): Record<string, z.ZodType> {
  return Object.fromEntries(
    resourcesOf(routes).flatMap(([resource, declared]) =>
      windowsOf(declared).map((window) => [
        cacheVariable(resource, window),
        WINDOW.default(declared.windows[window]),
      ]),
    ),
  );
}

/** The windows of every cached resource, read from parsed variables. */
export function cacheWindowsOf(
  routes: readonly DeclaresCache[],
  parsed: Readonly<Record<string, unknown>>,
): Readonly<Record<string, CacheWindows>> {
  const read = (resource: string, window: keyof CacheWindows) =>
    parsed[cacheVariable(resource, window)] as number;
  return Object.fromEntries(
    resourcesOf(routes).map(([resource, declared]) => [
      resource,
      {
        ttlSeconds: read(resource, 'ttlSeconds'),
        staleSeconds: read(resource, 'staleSeconds'),
        staleIfErrorSeconds: declared.scope === 'user' ? 0 : read(resource, 'staleIfErrorSeconds'),
      },
    ]),
  );
}

/** The variables as one object schema, for start-up parsing beside the environment's. */
export const cacheVariablesSchema = (routes: readonly DeclaresCache[]) =>
  z.object(cacheVariableSchemas(routes));

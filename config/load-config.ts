import type { z } from 'zod';
import {
  cacheVariablesSchema,
  cacheWindowsOf,
  type CacheWindows,
  type DeclaresCache,
} from './cache-variables.js';
import { ConfigSchema, type Config as EnvConfig } from './config-schema.js';

export type { BreakerThresholds } from './config-schema.js';
export type { CacheWindows, DeclaresCache } from './cache-variables.js';

/** The gateway's configuration: the environment's, and each cached route's windows. */
export type Config = EnvConfig & {
  /** By the route table's `cache.resource`. */
  readonly cache: Readonly<Record<string, CacheWindows>>;
};

export class ConfigError extends Error {
  readonly code = 'CONFIG_INVALID';
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration: ${problems.join('; ')}`);
    this.name = 'ConfigError';
  }
}

const problemsOf = (error: z.ZodError, present: Record<string, string>) =>
  error.issues.map((issue) => {
    const name = String(issue.path[0] ?? 'environment');
    const message =
      issue.code === 'invalid_type' && present[name] === undefined ? 'is required' : issue.message;
    return `${name} ${message}`;
  });

/**
 * Reads the environment once. Empty strings count as unset (compose files and `.env` lines
 * like `REDIS_URL=` mean "not configured"). Messages name variables, never their values.
 * `routes` is the route table: each cached route's windows come from its own variables
 * (config/cache-variables.ts).
 */
export function loadConfig(
  env: Readonly<Record<string, string | undefined>>,
  routes: readonly DeclaresCache[] = [],
): Config {
  const present = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value !== ''),
  ) as Record<string, string>;
  const parsed = ConfigSchema.safeParse(present);
  const windows = cacheVariablesSchema(routes).safeParse(present);
  const problems = [
    ...(parsed.success ? [] : problemsOf(parsed.error, present)),
    ...(windows.success ? [] : problemsOf(windows.error, present)),
  ];
  if (!parsed.success || !windows.success) throw new ConfigError([...new Set(problems)]);
  return deepFreeze({ ...parsed.data, cache: cacheWindowsOf(routes, windows.data) });
}

function deepFreeze<T extends object>(value: T): T {
  for (const child of Object.values(value)) {
    if (typeof child === 'object' && child !== null) deepFreeze(child as object);
  }
  return Object.freeze(value);
}

import { ConfigSchema, type Config } from './env-schema.js';

export type { BreakerThresholds, CacheWindows, Config } from './env-schema.js';

export class ConfigError extends Error {
  readonly code = 'CONFIG_INVALID';
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration: ${problems.join('; ')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Reads the environment once. Empty strings count as unset (compose files and `.env` lines
 * like `REDIS_URL=` mean "not configured"). Messages name variables, never their values.
 */
export function loadConfig(env: Readonly<Record<string, string | undefined>>): Config {
  const present = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value !== ''),
  );
  const parsed = ConfigSchema.safeParse(present);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const name = String(issue.path[0] ?? 'environment');
      const message =
        issue.code === 'invalid_type' && present[name] === undefined
          ? 'is required'
          : issue.message;
      return `${name} ${message}`;
    });
    throw new ConfigError([...new Set(problems)]);
  }
  return deepFreeze(parsed.data);
}

function deepFreeze<T extends object>(value: T): T {
  for (const child of Object.values(value)) {
    if (typeof child === 'object' && child !== null) deepFreeze(child as object);
  }
  return Object.freeze(value);
}

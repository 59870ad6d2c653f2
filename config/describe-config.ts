import type { z } from 'zod';
import { cacheVariableSchemas, type DeclaresCache } from './cache-variables.js';
import { EnvSchema, SECRET_KINDS, type ENV_VARIABLES } from './env-schema.js';
import { loadConfig } from './load-config.js';
import { MASK, maskUrl } from './secret-marks.js';

/**
 * The effective configuration as an operator checks it (`npm run config:check`): every
 * variable of the schema with the value the gateway would use and where it comes from; what the
 * schema marks secret is shown as set or unset only, and credentials inside URLs are masked.
 * Throws the start-up ConfigError when the environment is invalid, so the check and a real
 * start fail alike.
 */
export function describeConfig(
  env: Readonly<Record<string, string | undefined>>,
  routes: readonly DeclaresCache[] = [],
): string {
  loadConfig(env, routes);
  const schemas: Record<string, z.ZodType> = {
    ...EnvSchema.shape,
    ...cacheVariableSchemas(routes),
  };
  const names = Object.keys(schemas);
  const width = Math.max(...names.map((name) => name.length));
  const lines = names.map((name) => {
    const raw = env[name];
    const set = raw !== undefined && raw !== '';
    let shown: string;
    const kind = SECRET_KINDS.get(name as (typeof ENV_VARIABLES)[number]);
    if (kind === 'value') {
      shown = set ? `${MASK} (set)` : '(unset)';
    } else if (set) {
      shown = kind === 'url' ? maskUrl(raw) : raw;
    } else {
      const fallback: unknown = schemas[name]?.safeParse(undefined).data;
      shown = fallback === undefined ? '(unset)' : `${display(fallback)} (default)`;
    }
    return `${name.padEnd(width)}  ${shown}`;
  });
  return `Configuration is valid.\n${lines.join('\n')}\n`;
}

function display(value: unknown): string {
  return Array.isArray(value) ? value.join(',') : String(value);
}

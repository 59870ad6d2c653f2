import { ENV_VARIABLES, EnvSchema } from './env-schema.js';
import { loadConfig } from './load-config.js';

/** Variables whose values are credentials: shown as set or unset, never as their value. */
export const SECRET_VARIABLES: ReadonlySet<string> = new Set([
  'SEARCH_CLIENT_TOKEN',
  'CHAT_API_KEY',
  'CURSOR_SECRET',
  'SESSION_SECRET',
  'METRICS_TOKEN',
]);

/** Variables that are URLs: a password or token in them is masked, the rest shown. */
const URL_VARIABLES: ReadonlySet<string> = new Set([
  'REDIS_URL',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
]);

const MASK = '********';

/**
 * The effective configuration as an operator checks it (`npm run config:check`): every
 * variable of the schema with the value the gateway would use and where it comes from, secrets
 * masked. Throws the start-up ConfigError when the environment is invalid, so the check and a
 * real start fail alike.
 */
export function describeConfig(env: Readonly<Record<string, string | undefined>>): string {
  loadConfig(env);
  const width = Math.max(...ENV_VARIABLES.map((name) => name.length));
  const lines = ENV_VARIABLES.map((name) => {
    const raw = env[name];
    const set = raw !== undefined && raw !== '';
    let shown: string;
    if (SECRET_VARIABLES.has(name)) {
      shown = set ? `${MASK} (set)` : '(unset)';
    } else if (set) {
      shown = URL_VARIABLES.has(name) ? maskUrl(raw) : raw;
    } else {
      const fallback: unknown = EnvSchema.shape[name].safeParse(undefined).data;
      shown = fallback === undefined ? '(unset)' : `${display(fallback)} (default)`;
    }
    return `${name.padEnd(width)}  ${shown}`;
  });
  return `Configuration is valid.\n${lines.join('\n')}\n`;
}

function display(value: unknown): string {
  return Array.isArray(value) ? value.join(',') : String(value);
}

function maskUrl(value: string): string {
  const url = URL.parse(value);
  if (url === null) return MASK;
  if (url.password !== '') url.password = MASK;
  else if (url.username !== '') url.username = MASK;
  return url.href;
}

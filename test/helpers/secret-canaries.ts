import { ENV_VARIABLES, SECRET_KINDS, type Env } from '../../config/env-schema.js';

/**
 * A distinctive canary for every variable the schema marks secret, walked from the schema
 * itself: a secret added later gets one without anyone listing it here. Values hold characters
 * that percent-encoding and form-encoding change (`+ / = @ :`), so a leak in any of those forms
 * differs from the raw one and is looked for separately.
 */
export interface SecretCanaries {
  /** The marked variables with their canary values, to merge into an environment. */
  env: Record<string, string>;
  /** Each secret string the environment holds (a URL's credentials decoded), by a label. */
  secrets: Record<string, string>;
}

const value = (name: string) => `canary+${name}/0123456789abcdef=@:`;

/**
 * A URL variable's canary: credentials in the userinfo password and in a credential query
 * parameter, percent-encoded as a URL holds them, next to a harmless parameter.
 */
function url(name: string, target: CanaryTarget): { url: string; secrets: Record<string, string> } {
  const userinfo = `canary+${name}/userinfo@:`;
  const query = `canary+${name}/query=&`;
  const parsed = new URL(target.origin);
  parsed.username = 'gateway';
  parsed.password = encodeURIComponent(userinfo);
  const base = `${parsed.href.replace(/\/$/, '')}${target.path}`;
  return {
    url: `${base}?db=0&${target.parameter}=${encodeURIComponent(query)}`,
    secrets: {
      [`${name} userinfo password`]: userinfo,
      [`${name} ?${target.parameter}=`]: query,
    },
  };
}

interface CanaryTarget {
  /** `scheme://host:port` of a server the variable may point at. */
  origin: string;
  path: string;
  /** The query parameter holding a credential (spelled in various cases on purpose). */
  parameter: string;
}

/** Where the URL variables' canaries point. */
export interface CanaryOrigins {
  redis: string;
  otlp: string;
}

export function secretCanaries(origins: CanaryOrigins): SecretCanaries {
  const env: Record<string, string> = {};
  const secrets: Record<string, string> = {};
  for (const name of ENV_VARIABLES) {
    const kind = SECRET_KINDS.get(name);
    if (kind === 'value') {
      env[name] = value(name);
      secrets[name] = value(name);
    } else if (kind === 'url') {
      const canary = url(name, urlTarget(name, origins));
      env[name] = canary.url;
      Object.assign(secrets, canary.secrets);
    }
  }
  return { env, secrets };
}

/** A URL variable missing here fails the walk: its canary must be chosen, not guessed. */
function urlTarget(name: keyof Env, origins: CanaryOrigins): CanaryTarget {
  switch (name) {
    case 'REDIS_URL':
      return { origin: origins.redis, path: '/0', parameter: 'password' };
    case 'REDIS_CACHE_URL':
      return { origin: origins.redis, path: '/1', parameter: 'pass' };
    case 'OTEL_EXPORTER_OTLP_ENDPOINT':
      return { origin: origins.otlp, path: '', parameter: 'Api_Key' };
    case 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT':
      return { origin: origins.otlp, path: '/v1/traces', parameter: 'ACCESS_TOKEN' };
    default:
      throw new Error(`${name} is marked as a URL with secrets: give it a canary target here`);
  }
}

/**
 * Every form a leak of `secret` could take that the gateway itself could have produced: raw,
 * percent-encoded, form-encoded, base64, and (for a chat key) the base64 of `email:key` that
 * the `Basic` Authorization header carries.
 */
export function leakForms(secret: string, basicEmail?: string): Record<string, string> {
  return {
    raw: secret,
    'percent-encoded': encodeURIComponent(secret),
    'form-encoded': new URLSearchParams({ s: secret }).toString().slice(2),
    base64: Buffer.from(secret).toString('base64'),
    ...(basicEmail === undefined
      ? {}
      : { 'Basic base64': Buffer.from(`${basicEmail}:${secret}`).toString('base64') }),
  };
}

/** `label (form) in where` for every form of every secret that `text` contains. */
export function findLeaks(
  secrets: Record<string, string>,
  places: Record<string, string>,
  basicEmail?: string,
): string[] {
  const leaks: string[] = [];
  for (const [label, secret] of Object.entries(secrets)) {
    for (const [form, text] of Object.entries(leakForms(secret, basicEmail))) {
      for (const [where, content] of Object.entries(places)) {
        if (content.includes(text)) leaks.push(`${label} (${form}) in ${where}`);
      }
    }
  }
  return leaks;
}

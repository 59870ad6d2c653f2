import { z } from 'zod';

/**
 * How a variable holds a credential (GATEWAY-CONTRACT.md section 1, STYLE.md "Secrets"):
 * `value`, the whole value is one; `url`, a URL whose userinfo or query may hold one. The
 * schema marks a variable where it declares it; the configuration check, log redaction and the
 * upstream-message scrubber all read the mark, so none of them keeps a list of its own.
 */
export type SecretKind = 'value' | 'url';

const SecretMarks = z.registry<{ secret: SecretKind }>();

/** Marks a variable whose whole value is a credential: shown as set or unset only. */
export function secret<T extends z.ZodType>(schema: T): T {
  SecretMarks.add(schema, { secret: 'value' });
  return schema;
}

/** Marks a URL variable: its password, a lone user name and credential-like query values. */
export function urlWithSecrets<T extends z.ZodType>(schema: T): T {
  SecretMarks.add(schema, { secret: 'url' });
  return schema;
}

export function secretKindOf(schema: z.ZodType): SecretKind | undefined {
  return SecretMarks.get(schema)?.secret;
}

export const MASK = '********';

/**
 * Query parameters that carry credentials, matched anywhere in the name and case-insensitively
 * (`password`, `pass`, `pwd`, `token`, `access_token`, `key`, `apikey`, `api_key`, `secret`,
 * `client_secret`, `auth`, `sig`, ...): showing too little of a URL costs nothing.
 */
const CREDENTIAL_PARAMETER = /pass|pwd|token|key|secret|auth|sig|credential/i;

/** Percent-decoding; in a query (form encoding) `+` is a space as well. */
function decode(text: string, form: boolean): string {
  try {
    return decodeURIComponent(form ? text.replaceAll('+', ' ') : text);
  } catch {
    return text;
  }
}

/** The query's `name=value` pairs as written, with each name decoded for matching. */
function queryPairs(search: string): { raw: string; name: string; value: string | undefined }[] {
  return search
    .replace(/^\?/, '')
    .split('&')
    .filter((raw) => raw !== '')
    .map((raw) => {
      const at = raw.indexOf('=');
      return at === -1
        ? { raw, name: decode(raw, true), value: undefined }
        : { raw, name: decode(raw.slice(0, at), true), value: raw.slice(at + 1) };
    });
}

/**
 * A URL as an operator or a log line may see it: the userinfo password (or a user name standing
 * alone, which is often a token) and the values of credential-like query parameters masked, the
 * rest kept as written. Something that does not parse is masked whole.
 */
export function maskUrl(value: string): string {
  const url = URL.parse(value);
  if (url === null) return MASK;
  if (url.password !== '') url.password = MASK;
  else if (url.username !== '') url.username = MASK;
  if (url.search !== '') {
    url.search = queryPairs(url.search)
      .map((pair) =>
        pair.value !== undefined && CREDENTIAL_PARAMETER.test(pair.name)
          ? `${pair.raw.slice(0, pair.raw.indexOf('='))}=${MASK}`
          : pair.raw,
      )
      .join('&');
  }
  return url.href;
}

/** The credentials a URL holds, each as written in it and decoded: what maskUrl hides. */
function urlCredentials(value: string): string[] {
  const url = URL.parse(value);
  if (url === null) return [value];
  const userinfo = url.password !== '' ? url.password : url.username;
  const found = userinfo === '' ? [] : [userinfo, decode(userinfo, false)];
  for (const pair of queryPairs(url.search)) {
    if (pair.value !== undefined && pair.value !== '' && CREDENTIAL_PARAMETER.test(pair.name)) {
      found.push(pair.value, decode(pair.value, true));
    }
  }
  return found;
}

/** The secret strings one marked variable's value holds. */
export function credentialsOf(kind: SecretKind, value: unknown): string[] {
  if (typeof value !== 'string' || value === '') return [];
  return kind === 'value' ? [value] : urlCredentials(value);
}

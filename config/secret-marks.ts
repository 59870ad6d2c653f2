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

/**
 * Whether a query parameter may hold a credential, by its name as a server would read it:
 * percent-decoded (`pass%77ord`), with `+` as a space and separators dropped (`pass+word`,
 * `api-key`). A pair without a name (`=value`) is masked too: nothing says what it holds.
 */
function holdsCredential(rawName: string): boolean {
  const name = decode(rawName, true);
  return (
    name.trim() === '' ||
    CREDENTIAL_PARAMETER.test(name) ||
    CREDENTIAL_PARAMETER.test(name.replace(/[^\p{L}\p{N}]/gu, ''))
  );
}

interface QueryPair {
  /** The pair as written, or a separator (`&` or `;`) or an empty piece between two. */
  raw: string;
  /** Where the value starts in `raw`, when the pair holds a credential and has a value. */
  secretAt: number | undefined;
}

/**
 * A query's (or fragment's) pieces as written, separators kept: servers split a query on `&`,
 * and many (Redis clients, Java and PHP frameworks, W3C's HTML 4 advice) on `;` as well, so a
 * credential may follow either (contract section 7, "Edges").
 */
function queryPairs(search: string): QueryPair[] {
  return search
    .replace(/^[?#]/, '')
    .split(/([&;])/)
    .map((raw) => {
      const at = raw.indexOf('=');
      if (raw === '&' || raw === ';' || at === -1) return { raw, secretAt: undefined };
      return { raw, secretAt: holdsCredential(raw.slice(0, at)) ? at + 1 : undefined };
    });
}

/** The query's or fragment's pieces, each credential value masked. */
function maskPairs(search: string): string {
  return queryPairs(search)
    .map(({ raw, secretAt }) => (secretAt === undefined ? raw : `${raw.slice(0, secretAt)}${MASK}`))
    .join('');
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
  // The fragment never leaves this machine, but it is shown like the query, so it is masked
  // like the query.
  if (url.search !== '') url.search = maskPairs(url.search);
  if (url.hash !== '') url.hash = maskPairs(url.hash);
  return url.href;
}

/** The credentials a URL holds, each as written in it and decoded: what maskUrl hides. */
function urlCredentials(value: string): string[] {
  const url = URL.parse(value);
  if (url === null) return [value];
  const userinfo = url.password !== '' ? url.password : url.username;
  const found = userinfo === '' ? [] : [userinfo, decode(userinfo, false)];
  for (const { raw, secretAt } of [...queryPairs(url.search), ...queryPairs(url.hash)]) {
    const written = secretAt === undefined ? '' : raw.slice(secretAt);
    // A server may read `+` as a space (form encoding) or as itself: both are the secret.
    if (written !== '') found.push(written, decode(written, true), decode(written, false));
  }
  return found;
}

/** The secret strings one marked variable's value holds. */
export function credentialsOf(kind: SecretKind, value: unknown): string[] {
  if (typeof value !== 'string' || value === '') return [];
  return kind === 'value' ? [value] : urlCredentials(value);
}

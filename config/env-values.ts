import { z } from 'zod';

/*
 * What the text of a variable may be: the parsers the environment's schema (env-schema.ts) and
 * the cached routes' windows (cache-variables.ts) are built from.
 */

export const integer = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));

/** A base URL without credentials, query or fragment; its path prefix is kept. */
export const baseUrl = z
  .url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL' })
  .transform((value) => new URL(value))
  .refine((url) => url.username === '' && url.password === '', 'must not contain credentials')
  .refine((url) => url.search === '' && url.hash === '', 'must not contain a query or fragment')
  .transform((url) => url.href.replace(/\/+$/, ''));

export const redisUrl = z.url({
  protocol: /^rediss?$/,
  error: 'must be a redis:// or rediss:// URL',
});

/** An OTLP endpoint; a collector's credentials may sit in its userinfo or query. */
export const otlpUrl = z.url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL' });

/** Comma-separated `host:port` pairs: cluster seed nodes or Sentinels. */
export const hostPorts = z
  .string()
  .transform((value) =>
    value
      .split(',')
      .map((entry) => entry.trim())
      .filter((entry) => entry !== ''),
  )
  .pipe(
    z
      .array(
        z
          .string()
          .regex(/^(?:\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, 'must list host:port pairs')
          .transform((entry) => {
            const at = entry.lastIndexOf(':');
            return {
              host: entry.slice(0, at).replace(/^\[(.*)\]$/, '$1'),
              port: Number(entry.slice(at + 1)),
            };
          })
          .refine((node) => node.port >= 1 && node.port <= 65_535, 'must list host:port pairs'),
      )
      .min(1, 'must list at least one host:port'),
  );

/**
 * Comma-separated bare origins. `*` or anything that does not parse is a start-up error with
 * the variable's name, never an exception (contract section 1).
 */
export const origins = z
  .string()
  .transform((value) =>
    value
      .split(',')
      .map((origin) => origin.trim())
      .filter((origin) => origin !== ''),
  )
  .pipe(
    z.array(
      z.string().refine((origin) => {
        const url = URL.parse(origin);
        return (
          url !== null &&
          (url.protocol === 'http:' || url.protocol === 'https:') &&
          url.origin === origin
        );
      }, 'must list bare http(s) origins such as https://app.example.com (no *, path or slash)'),
    ),
  );

/** Hop count, address list, or false; `true` would believe any client's X-Forwarded-For. */
export const trustProxy = z.string().transform((value, ctx): false | number | string[] => {
  const text = value.trim().toLowerCase();
  if (text === 'false' || text === '0') return false;
  if (/^\d{1,2}$/.test(text)) return Number(text);
  const entries = text.split(',').map((entry) => entry.trim());
  const valid = entries.every(
    (entry) =>
      ['loopback', 'linklocal', 'uniquelocal'].includes(entry) ||
      /^[0-9a-f:.]+(\/\d{1,3})?$/.test(entry),
  );
  if (text === 'true' || !valid) {
    ctx.addIssue({
      code: 'custom',
      message: 'must be false, a hop count, or a list of proxy addresses',
    });
    return z.NEVER;
  }
  return entries;
});

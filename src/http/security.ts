import cors from 'cors';
import type { RequestHandler } from 'express';
import helmet from 'helmet';

/**
 * Response hardening and CORS. The gateway serves JSON only, so helmet's defaults (including a
 * deny-all CSP) cost nothing. CORS answers only the configured origins; with none configured,
 * browsers on other origins are refused.
 */
export function createSecurity(options: { corsOrigins: readonly string[] }): RequestHandler[] {
  const allowed = new Set(options.corsOrigins);
  return [
    helmet(),
    // Credentials (the session cookie) only for listed origins; the origin is echoed, never `*`.
    cors({
      origin: (origin, callback) => callback(null, origin !== undefined && allowed.has(origin)),
      credentials: true,
      methods: ['GET', 'POST', 'DELETE'],
      allowedHeaders: ['Content-Type', 'X-Request-Id', 'X-CSRF'],
      exposedHeaders: ['X-Request-Id', 'X-Cache', 'Retry-After', 'RateLimit', 'RateLimit-Policy'],
      maxAge: 600,
    }),
  ];
}

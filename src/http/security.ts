import type { IncomingMessage, ServerResponse } from 'node:http';
import cors from 'cors';
import helmet from 'helmet';

type Step = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void;

/**
 * Response hardening and CORS, for every answer. The gateway serves JSON only, so helmet's
 * defaults (including a deny-all CSP) cost nothing. CORS answers only the configured origins;
 * with none configured, browsers on other origins are refused.
 */
export function createSecurity(options: { corsOrigins: readonly string[] }): Step {
  const allowed = new Set(options.corsOrigins);
  const headers = helmet();
  // Credentials (the session cookie) only for listed origins; the origin is echoed, never `*`.
  const crossOrigin = cors({
    origin: (origin, callback) => callback(null, origin !== undefined && allowed.has(origin)),
    credentials: true,
    methods: ['GET', 'POST', 'DELETE'],
    allowedHeaders: ['Content-Type', 'X-Request-Id', 'X-CSRF'],
    exposedHeaders: ['X-Request-Id', 'X-Cache', 'Retry-After', 'RateLimit', 'RateLimit-Policy'],
    maxAge: 600,
  }) as unknown as Step;
  return (req, res, next) => {
    headers(req, res, (error) => (error ? next(error) : crossOrigin(req, res, next)));
  };
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import cors from 'cors';
import helmet from 'helmet';
import vary from 'vary';

type Step = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void;

/** Request headers a browser on an allowed origin may send (contract section 1). */
const ALLOWED_HEADERS = [
  'Content-Type',
  'X-Request-Id',
  'X-CSRF',
  'If-None-Match',
  'traceparent',
  'tracestate',
  // An EventSource reconnecting sends the version it holds (contract sections 1 and 2.2).
  'Last-Event-ID',
];
/** Response headers its scripts may read (contract section 1). */
const EXPOSED_HEADERS = [
  'ETag',
  'Cache-Status',
  'X-Cache',
  'X-Request-Id',
  'Retry-After',
  'RateLimit',
  'RateLimit-Policy',
];

const isPreflight = (req: IncomingMessage) =>
  req.method === 'OPTIONS' &&
  req.headers.origin !== undefined &&
  req.headers['access-control-request-method'] !== undefined;

/**
 * Response hardening and CORS, for every answer. The gateway serves JSON only, so helmet's
 * defaults (including a deny-all CSP) cost nothing. CORS answers only the configured origins,
 * with credentials (the session cookie) and the origin echoed, never `*`. Every preflight is
 * answered here, before rate limits and routing: an unlisted origin gets 204 with no
 * `Access-Control-Allow-*` headers, so the browser refuses the call, at no cost to anyone's
 * rate-limit budget (contract section 1).
 */
export function createSecurity(options: { corsOrigins: readonly string[] }): Step {
  const allowed = new Set(options.corsOrigins);
  const headers = helmet();
  const crossOrigin = cors({
    origin: (origin, callback) => callback(null, origin !== undefined && allowed.has(origin)),
    credentials: true,
    methods: ['GET', 'POST', 'DELETE'],
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
    optionsSuccessStatus: 204,
  }) as unknown as Step;
  const varies = allowed.size > 0;
  return (req, res, next) => {
    headers(req, res, (error) => {
      if (error) return next(error);
      // Whether CORS headers come depends on Origin, so every answer says so, granted or not:
      // a shared cache must not hand the answer to one origin to another (contract section 4).
      if (varies) vary(res, 'Origin');
      if (isPreflight(req) && !allowed.has(req.headers.origin ?? '')) {
        res.statusCode = 204;
        res.setHeader('Content-Length', '0');
        res.end();
        return;
      }
      crossOrigin(req, res, next);
    });
  };
}

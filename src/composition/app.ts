import express, { type Express, type RequestHandler } from 'express';
import { createBodyParsing } from '../http/body-parsing.js';
import { compressSentBodies } from '../http/compressed-send.js';
import type { TrustFunction } from '../http/client-address.js';
import { createErrorHandler, createNotFound } from '../http/error-handler.js';

export interface AppDependencies {
  /** Health, readiness and metrics: here, unless OPS_PORT serves them on a listener of their own. */
  ops?: RequestHandler;
  /** `/openapi.json` and `/docs`: public, before the frontend's fallback and the API's guards. */
  docs?: RequestHandler;
  /** Which hops' X-Forwarded-For decides `req.ip`: the same function the hit path uses. */
  trust: TrustFunction;
  bodyLimitBytes: number;
  /** A built frontend (STATIC_DIR), served before the API's guards. */
  site?: readonly RequestHandler[];
  /** Run on every /api request before bodies are read: CSRF, rate limits. */
  guards?: readonly RequestHandler[];
  /** Feature routers, each with its routes' full paths (features/route-table.ts). */
  routers: readonly RequestHandler[];
}

/**
 * Builds the Express app: operations routes, the served frontend, guards, body parsing,
 * routers, 404 and the error handler.
 * Never listens. What every request gets whoever answers it (request id, log line, security
 * headers, CORS) is the edge's, in front of it (http/edge.ts).
 */
export function createApp(deps: AppDependencies): Express {
  const app = express();
  app.disable('x-powered-by');
  // Cached answers carry their own validator; Express would hash every other body for one.
  app.set('etag', false);
  app.set('trust proxy', deps.trust);
  // Bodies it builds go out compressed when COMPRESSION allows (http/compression.ts).
  compressSentBodies(app.response);

  // A route the hit path ran itself and that failed: straight to the error handler below.
  app.use((req, _res, next) => next(req.failedInFront));
  if (deps.ops) app.use(deps.ops);
  if (deps.docs) app.use(deps.docs);
  for (const handler of deps.site ?? []) app.use(handler);
  for (const guard of deps.guards ?? []) app.use(guard);
  app.use(createBodyParsing(deps.bodyLimitBytes));
  for (const router of deps.routers) app.use(router);
  app.use(createNotFound());
  app.use(createErrorHandler());
  return app;
}

/** The operations listener's app (OPS_PORT): health, readiness and metrics, nothing else. */
export function createOpsApp(ops: RequestHandler): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  compressSentBodies(app.response);
  app.use(ops);
  app.use(createNotFound());
  app.use(createErrorHandler());
  return app;
}

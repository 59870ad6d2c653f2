import express, { type Express, type RequestHandler } from 'express';
import type { Logger } from 'pino';
import type { Readiness } from './health/readiness.js';
import { createBodyParsing } from './http/body-parsing.js';
import { createErrorHandler, createNotFound } from './http/error-handler.js';
import { createHealthRouter } from './http/health-router.js';
import { createRequestId } from './http/request-id.js';
import { createRequestLogger } from './http/request-logger.js';
import { createSecurity } from './http/security.js';

export interface AppDependencies {
  logger: Logger;
  readiness: Readiness;
  corsOrigins: readonly string[];
  /** Express's `trust proxy`: which hops' X-Forwarded-For decides the client address. */
  trustProxy: false | number | readonly string[];
  bodyLimitBytes: number;
  /** Run on every /api request before bodies are read: CSRF, rate limits. */
  guards?: readonly RequestHandler[];
  /** Feature routers by mount path, e.g. `/api/search`. */
  routers: Readonly<Record<string, RequestHandler>>;
}

/** Builds the Express app: middleware order, routers, 404 and the error handler. Never listens. */
export function createApp(deps: AppDependencies): Express {
  const app = express();
  app.disable('x-powered-by');
  // Bodies are served from the cache as ready strings; hashing them for an ETag would cost
  // every hit a pass over the body for a header no client here uses.
  app.set('etag', false);
  app.set('trust proxy', deps.trustProxy);

  app.use(createRequestId());
  // While draining, every response tells the client to take its next request elsewhere.
  app.use((_req, res, next) => {
    if (deps.readiness.draining) res.setHeader('Connection', 'close');
    next();
  });
  app.use(createRequestLogger(deps.logger));
  app.use(createSecurity({ corsOrigins: deps.corsOrigins }));
  app.use(createHealthRouter(deps.readiness));
  for (const guard of deps.guards ?? []) app.use(guard);
  app.use(createBodyParsing(deps.bodyLimitBytes));
  for (const [path, router] of Object.entries(deps.routers)) app.use(path, router);
  app.use(createNotFound());
  app.use(createErrorHandler());
  return app;
}

import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Metrics } from '../observability/metrics.js';
import { routeTemplate } from '../observability/route-templates.js';
import { enterTrace } from '../observability/trace-context.js';
import { assignRequestId } from './request-id.js';
import { createRequestLogger } from './request-logger.js';
import { createSecurity } from './security.js';

export type Next = () => void;
/** A stage of the request path in front of the app: handles the request, or passes it on. */
export type Stage = (req: IncomingMessage, res: ServerResponse, next: Next) => void;

/**
 * What every request gets before anything answers it, whichever stage then does: its request
 * id, its one log line, the security headers and CORS, and `Connection: close` while draining.
 * It runs in front of both the hit path and the app, so neither can skip any of it.
 */
export function createEdge(options: {
  logger: Logger;
  corsOrigins: readonly string[];
  isDraining(): boolean;
  metrics: Metrics;
  /** Whether a frontend is served (STATIC_DIR): its paths get their own route label. */
  site: boolean;
}): Stage {
  const log = createRequestLogger(options.logger);
  const security = createSecurity({ corsOrigins: options.corsOrigins });
  const { metrics } = options;
  return (req, res, next) => {
    // Captured now: Express rewrites req.url while a mounted router runs.
    const url = req.url ?? '/';
    const route = () => routeTemplate(url, options.site);
    if (metrics.enabled) {
      const started = performance.now();
      res.once('finish', () => {
        metrics.observeRequest(
          req.method ?? 'GET',
          route(),
          res.statusCode,
          (performance.now() - started) / 1000,
        );
      });
    }
    assignRequestId(req, res);
    // While draining, every response tells the client to take its next request elsewhere.
    if (options.isDraining()) res.setHeader('Connection', 'close');
    enterTrace(req, res, route, () => {
      log(req, res);
      security(req, res, () => next());
    });
  };
}

/** The request listener of stages in front of an app: each passes on to the next. */
export function chain(stages: readonly Stage[], app: RequestListener): RequestListener {
  return stages.reduceRight<RequestListener>(
    (next, stage) => (req, res) => stage(req, res, () => void next(req, res)),
    app,
  );
}

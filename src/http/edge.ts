import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Metrics } from '../observability/metrics.js';
import type { RouteTemplates } from '../observability/route-templates.js';
import { enterTrace, traceHeadersFromSdk } from '../observability/trace-context.js';
import { assignRequestId } from './request-id.js';
import { createRequestLogger } from './request-logger.js';
import { AppError } from '../errors/app-error.js';
import { writeProblem } from './error-handler.js';
import { readRequestTarget } from './request-target.js';
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
  /** The route template of a request target (its metric label and span name). */
  routeOf: RouteTemplates;
}): Stage {
  const log = createRequestLogger(options.logger);
  const security = createSecurity({ corsOrigins: options.corsOrigins });
  const { metrics, routeOf } = options;
  /** One listener for every response (no closure per request): the request's own fields. */
  function observe(this: ServerResponse): void {
    const req = this.req as IncomingMessage & Timed;
    metrics.observeRequest(
      req.method ?? 'GET',
      routeOf(req[URL_SEEN]),
      this.statusCode,
      (performance.now() - req[STARTED]) / 1000,
    );
  }
  return (req, res, next) => {
    const timed = req as IncomingMessage & Timed;
    // Captured now: Express rewrites req.url while a mounted router runs.
    timed[URL_SEEN] = req.url ?? '/';
    if (metrics.enabled) {
      timed[STARTED] = performance.now();
      res.on('finish', observe);
    }
    assignRequestId(req, res);
    const target = readRequestTarget(req);
    // While draining, every response tells the client to take its next request elsewhere.
    if (options.isDraining()) res.setHeader('Connection', 'close');
    // Untraced requests (no SDK, no traceparent) take the path with no closures.
    const after = target === undefined ? () => refuseTarget(req, res) : next;
    if (!traceHeadersFromSdk() && req.headers.traceparent === undefined) {
      proceed(req, res, after);
      return;
    }
    enterTrace(
      req,
      res,
      () => routeOf(timed[URL_SEEN]),
      () => proceed(req, res, after),
    );
  };

  /** The line, the headers and CORS, then on to the next stage. */
  function proceed(req: IncomingMessage, res: ServerResponse, next: Next): void {
    log(req, res);
    security(req, res, () => next());
  }
}

/** A target no route can read the way the client meant it: 400 before any stage runs. */
function refuseTarget(req: IncomingMessage, res: ServerResponse): void {
  writeProblem(
    req,
    res,
    new AppError(
      'BAD_REQUEST',
      'The request target must be a path with an optional query, without a fragment (#).',
    ),
  );
}

const URL_SEEN = Symbol('url as received');
const STARTED = Symbol('request start');
interface Timed {
  [URL_SEEN]: string;
  [STARTED]: number;
}

/** The request listener of stages in front of an app: each passes on to the next. */
export function chain(stages: readonly Stage[], app: RequestListener): RequestListener {
  return stages.reduceRight<RequestListener>(
    (next, stage) => (req, res) => stage(req, res, () => void next(req, res)),
    app,
  );
}

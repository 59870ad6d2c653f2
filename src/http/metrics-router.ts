import { timingSafeEqual } from 'node:crypto';
import { Router } from 'express';
import { AppError } from '../errors/app-error.js';
import type { Metrics } from '../observability/metrics.js';
import { methodNotAllowed } from './error-handler.js';

/** Constant-time comparison of the presented bearer token with the configured one. */
function sameToken(presented: string | undefined, token: string): boolean {
  if (presented === undefined) return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * `GET /metrics` (contract sections 1 and 6): Prometheus text. With METRICS_TOKEN set it needs
 * `Authorization: Bearer <token>`; without or with a wrong one, 401 problem+json with
 * `WWW-Authenticate: Bearer`.
 */
export function createMetricsRouter(options: {
  metrics: Metrics;
  token: string | undefined;
}): Router {
  const router = Router();
  router
    .route('/metrics')
    .get(async (req, res) => {
      if (options.token !== undefined) {
        const header = req.get('authorization');
        const presented = header?.startsWith('Bearer ') ? header.slice(7) : undefined;
        if (!sameToken(presented, options.token)) {
          throw new AppError('UNAUTHORIZED', 'Metrics need a bearer token.', {
            headers: { 'WWW-Authenticate': 'Bearer realm="metrics"' },
          });
        }
      }
      res
        .status(200)
        .set({ 'Content-Type': options.metrics.contentType, 'Cache-Control': 'no-store' })
        .send(await options.metrics.render());
    })
    .all(methodNotAllowed(['GET']));
  return router;
}

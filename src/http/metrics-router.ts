import { createHash, timingSafeEqual } from 'node:crypto';
import { Router } from 'express';
import { AppError } from '../errors/app-error.js';
import type { Metrics } from '../observability/metrics.js';
import { METRICS_ROUTE } from './ops-routes.js';
import type { RouteGuard } from './route-mount.js';
import { mountRoute } from './route-mounter.js';

/**
 * The token of a Bearer credential (RFC 6750 §2.1): the scheme matched case-insensitively
 * (RFC 9110 §11.1), then one or more spaces (§11.4's `1*SP`), then the token, compared whole.
 * Any characters are taken, as METRICS_TOKEN does not restrict them to token68.
 */
const BEARER = /^bearer +(.*?) *$/i;

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * Compares the presented token with the configured one in constant time: over digests of equal
 * length, so neither the content nor the length of the configured token shows in the timing.
 */
function sameToken(presented: string | undefined, token: string): boolean {
  if (presented === undefined) return false;
  return timingSafeEqual(digest(presented), digest(token));
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
  mountRoute(
    router,
    METRICS_ROUTE,
    async (_req, res) => {
      res
        .status(200)
        .set({ 'Content-Type': options.metrics.contentType, 'Cache-Control': 'no-store' })
        .send(await options.metrics.render());
    },
    { metricsToken: metricsTokenGuard(options.token) },
  );
  return router;
}

/** The `metricsToken` guard: with METRICS_TOKEN set, the bearer token; without it, anyone. */
function metricsTokenGuard(token: string | undefined): RouteGuard<true> {
  return {
    peek(req) {
      if (token === undefined) return Promise.resolve(true);
      const presented = BEARER.exec(req.headers.authorization ?? '')?.[1];
      return Promise.resolve(sameToken(presented, token) ? true : undefined);
    },
    refuse: () =>
      new AppError('UNAUTHORIZED', 'Metrics need a bearer token.', {
        headers: { 'WWW-Authenticate': 'Bearer realm="metrics"' },
      }),
    owner: () => 'metrics',
    run: (_req, _res, _admitted, work) => work(),
  };
}

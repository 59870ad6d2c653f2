import { Router } from 'express';
import type { Readiness } from '../health/readiness.js';
import type { Metrics } from '../observability/metrics.js';
import { createHealthRouter } from './health-router.js';
import { createMetricsRouter } from './metrics-router.js';

/**
 * What an operator's tools call (contract section 2): /healthz, /readyz and, unless metrics are
 * off, /metrics. Mounted on the public listener, or alone on OPS_PORT.
 */
export function createOpsRouter(options: {
  readiness: Readiness;
  metrics: Metrics;
  metricsToken: string | undefined;
}): Router {
  const router = Router().use(createHealthRouter(options.readiness));
  if (options.metrics.enabled) {
    router.use(createMetricsRouter({ metrics: options.metrics, token: options.metricsToken }));
  }
  return router;
}

import { Router } from 'express';
import type { Readiness } from '../health/readiness.js';
import { HEALTH_ROUTE, READINESS_ROUTE } from './ops-routes.js';
import { mountRoute } from './route-mounter.js';

/** Liveness and readiness (contract section 2): alive is 200; ready is 503 only while draining. */
export function createHealthRouter(readiness: Readiness): Router {
  const router = Router();
  mountRoute(router, HEALTH_ROUTE, (_req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    res.json({ status: 'ok' });
  });
  mountRoute(router, READINESS_ROUTE, (_req, res) => {
    const report = readiness.report();
    res.setHeader('Cache-Control', 'no-store');
    res.status(report.status === 'draining' ? 503 : 200).json(report);
  });
  return router;
}

import { Router } from 'express';
import type { Readiness } from '../health/readiness.js';
import { methodNotAllowed } from './error-handler.js';

/** Liveness and readiness (contract section 2): alive is 200; ready is 503 only while draining. */
export function createHealthRouter(readiness: Readiness): Router {
  const router = Router();
  router
    .route('/healthz')
    .get((_req, res) => {
      res.setHeader('Cache-Control', 'no-store');
      res.json({ status: 'ok' });
    })
    .all(methodNotAllowed(['GET']));
  router
    .route('/readyz')
    .get((_req, res) => {
      const report = readiness.report();
      res.setHeader('Cache-Control', 'no-store');
      res.status(report.status === 'draining' ? 503 : 200).json(report);
    })
    .all(methodNotAllowed(['GET']));
  return router;
}

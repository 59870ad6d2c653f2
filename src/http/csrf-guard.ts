import type { RequestHandler } from 'express';
import { AppError } from '../errors/app-error.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The anti-forgery header: a cross-site form or a simple request cannot set it. */
export const CSRF_HEADER = 'X-CSRF';

/**
 * Cross-site request forgery protection for unsafe methods (the header pattern of security
 * BFFs): the request must carry `X-CSRF: 1`, which only a script allowed by CORS can add, and
 * come from an allowed Origin or say `Sec-Fetch-Site: same-origin`. Runs before body parsing
 * and routing, so a forged request gets nothing done.
 */
export function createCsrfGuard(options: { allowedOrigins: readonly string[] }): RequestHandler {
  const allowed = new Set(options.allowedOrigins);
  return (req, _res, next) => {
    if (SAFE_METHODS.has(req.method)) {
      next();
      return;
    }
    if (req.get(CSRF_HEADER) !== '1') {
      next(new AppError('CSRF_REJECTED', `Unsafe requests need the ${CSRF_HEADER}: 1 header.`));
      return;
    }
    const origin = req.get('origin');
    const sameOrigin = req.get('sec-fetch-site') === 'same-origin';
    if (!sameOrigin && (origin === undefined || !allowed.has(origin))) {
      next(new AppError('CSRF_REJECTED', 'Unsafe requests must come from an allowed origin.'));
      return;
    }
    next();
  };
}

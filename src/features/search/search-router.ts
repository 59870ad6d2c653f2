import { Router, type RequestHandler } from 'express';
import { AppError } from '../../errors/app-error.js';
import { parseInput } from '../../errors/validation-error.js';
import { methodNotAllowed } from '../../http/error-handler.js';
import type { SearchFormat } from '../../upstreams/search/search-client.js';
import type { createSearchQuerySchema } from './search-query.js';
import type { SearchService } from './search-service.js';

export interface SearchRouterOptions {
  service: SearchService;
  querySchema: ReturnType<typeof createSearchQuerySchema>;
  /** The click-tracking redirect proxy for `/url`. */
  redirectProxy: RequestHandler;
}

const FORMATS: Record<string, SearchFormat> = {
  'application/json': 'json',
  'application/ld+json': 'ld+json',
};

export function createSearchRouter(options: SearchRouterOptions): Router {
  const router = Router();

  router
    .route('/url')
    .get(options.redirectProxy)
    .all(methodNotAllowed(['GET']));

  router
    .route('/')
    .get(async (req, res) => {
      const accepted = req.accepts(Object.keys(FORMATS));
      if (accepted === false) {
        throw new AppError(
          'NOT_ACCEPTABLE',
          'Search results are available as application/json or application/ld+json.',
        );
      }
      const request = parseInput(options.querySchema, req.query, 'query');
      const result = await options.service.search(request, FORMATS[accepted]!, req.id);
      res
        .status(200)
        .set({
          'Content-Type': result.contentType,
          'X-Cache': result.cacheStatus,
          Vary: 'Accept',
          'Cache-Control': 'no-store',
        })
        .send(result.body);
    })
    .all(methodNotAllowed(['GET']));

  return router;
}

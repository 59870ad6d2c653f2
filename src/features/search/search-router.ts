import { Router, type Request, type Response } from 'express';
import { AppError } from '../../errors/app-error.js';
import { parseInput } from '../../errors/validation-error.js';
import { mountRoute } from '../../http/route-spec.js';
import { sendRepresentation } from '../../http/send-representation.js';
import { ROUTES } from '../route-table.js';
import { negotiateFormat } from './search-format.js';
import type { createSearchQuerySchema } from './search-query.js';
import type { ResolvedSearch, SearchService } from './search-service.js';

export interface SearchRouterOptions {
  service: SearchService;
  querySchema: ReturnType<typeof createSearchQuerySchema>;
  /** The search the hit path already resolved for this request, if it read the request. */
  resolved(req: Request): ResolvedSearch | undefined;
  /** The click-tracking redirect proxy for `/url`. */
  redirect(req: Request, res: Response): Promise<void>;
}

export function createSearchRouter(options: SearchRouterOptions): Router {
  const router = Router();

  /** Negotiates, validates and names the search: what the hit path does for the requests it reads. */
  function resolve(req: Request): ResolvedSearch {
    const format = negotiateFormat(req);
    if (format === undefined) {
      throw new AppError(
        'NOT_ACCEPTABLE',
        'Search results are available as application/json or application/ld+json.',
      );
    }
    const request = parseInput(options.querySchema, req.query, 'query');
    return options.service.resolve(request, format);
  }

  mountRoute(router, ROUTES.followResultLink, (req, res) => options.redirect(req, res));

  // The query schema depends on SEARCH_MAX_K, and the format is negotiated first: `resolve`.
  mountRoute(router, ROUTES.search, async (req, res) => {
    const search = options.resolved(req) ?? resolve(req);
    // The hit path read this entry already when it admitted the request.
    const read = req.admission?.read;
    const result = await options.service.search(search, {
      requestId: req.id,
      log: req.log,
      ...(read?.key === search.key ? { known: read } : {}),
    });
    sendRepresentation(req, res, result.representation, { ...result, vary: 'Accept' });
  });

  return router;
}

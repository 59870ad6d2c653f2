import { Router, type Request, type Response } from 'express';
import type { FeatureMounter } from '../route-guards.js';
import { ROUTES } from '../route-table.js';
import { SEARCH_FORMATS } from './search-formats.js';
import type { SearchContext } from '../route-context.js';
import type { SearchService } from './search-service.js';

export interface SearchRouterOptions {
  service: SearchService;
  search: SearchContext;
  mounter: FeatureMounter;
  /** The click-tracking redirect proxy for `/url`. */
  redirect(req: Request, res: Response): Promise<void>;
}

/** `/api/search` (cached: the route table decides the key and the read-through) and `/url`. */
export function createSearchRouter(options: SearchRouterOptions): Router {
  const router = Router();
  options.mounter.mount(router, ROUTES.followResultLink, (req, res) => options.redirect(req, res));
  options.mounter.mountCached(router, ROUTES.search, ({ query, accept }, req) =>
    options.service.build(options.search.resolve(query), SEARCH_FORMATS[accept] ?? 'json', req.id),
  );
  return router;
}

import type { Router } from 'express';
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import type { Config } from '../../../config/load-config.js';
import type { CachedLoader } from '../../cache/cached-loader.js';
import type { Breaker } from '../../upstreams/http/circuit-breaker.js';
import { secretOrEphemeral } from '../../security/secret-or-ephemeral.js';
import { createSearchClient } from '../../upstreams/search/search-client.js';
import { createRedirectUrlMatcher } from './rp-param.js';
import { createCursorCodec } from './search-cursor.js';
import { createSearchQuerySchema } from './search-query.js';
import { createSearchRedirectProxy } from './search-redirect-proxy.js';
import { createSearchRouter } from './search-router.js';
import { createSearchService } from './search-service.js';

export const SEARCH_ROUTE = '/api/search';

/** The search feature from configuration: client, service and router. */
export function createSearchFeature(options: {
  config: Config;
  logger: Logger;
  pool: Dispatcher;
  breaker: Breaker;
  loader: CachedLoader;
}): Router {
  const { search } = options.config;
  const service = createSearchService({
    client: createSearchClient({
      pool: options.pool,
      breaker: options.breaker,
      basePath: new URL(search.baseUrl).pathname.replace(/\/$/, ''),
      clientToken: search.clientToken,
      deadlineMs: search.timeoutMs,
    }),
    loader: options.loader,
    cursors: createCursorCodec({
      secret: secretOrEphemeral(search.cursorSecret, 'CURSOR_SECRET', options.logger),
      searchBaseUrl: search.baseUrl,
    }),
    isRedirectUrl: createRedirectUrlMatcher(search.baseUrl),
    windows: search.cache,
    routePath: SEARCH_ROUTE,
  });
  return createSearchRouter({
    service,
    querySchema: createSearchQuerySchema(search.maxK),
    redirectProxy: createSearchRedirectProxy({
      searchBaseUrl: search.baseUrl,
      deadlineMs: search.redirectTimeoutMs,
    }),
  });
}

import type { Router } from 'express';
import type { Config } from '../../../config/load-config.js';
import type { Upstream } from '../../upstreams/http/upstream.js';
import { createSearchClient } from '../../upstreams/search/search-client.js';
import type { RouteContext } from '../route-context.js';
import type { FeatureMounter } from '../route-guards.js';
import { ROUTES } from '../route-table.js';
import { createRedirectUrlMatcher } from './rp-param.js';
import { createSearchRedirect } from './search-redirect.js';
import { createSearchRouter } from './search-router.js';
import { createSearchService } from './search-service.js';

/** The search routes from configuration: client, service and router. */
export function createSearchFeature(options: {
  config: Config;
  context: RouteContext;
  mounter: FeatureMounter;
  upstream: Upstream;
  /** The same service behind a breaker of its own, for the click-tracking redirect. */
  redirectUpstream: Upstream;
}): Router {
  const { config, upstream, context } = options;
  const { search } = config;
  const { gatewayLinks } = context.search;
  const service = createSearchService({
    client: createSearchClient({
      upstream,
      clientToken: search.clientToken,
      deadlineMs: search.timeoutMs,
      retryAfterMaxSeconds: config.retryAfterMaxSeconds,
      maxJsonDepth: config.upstreamLimits.maxJsonDepth,
    }),
    isRedirectUrl: createRedirectUrlMatcher(search.baseUrl),
    routePath: ROUTES.search.path,
    search: context.search,
  });
  return createSearchRouter({
    service,
    search: context.search,
    mounter: options.mounter,
    redirect: createSearchRedirect({
      upstream: options.redirectUpstream,
      deadlineMs: search.redirectTimeoutMs,
      retryAfterMaxSeconds: config.retryAfterMaxSeconds,
      ...(gatewayLinks ? { links: gatewayLinks } : {}),
    }),
  });
}

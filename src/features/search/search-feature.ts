import type { IncomingMessage } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import type { Router } from 'express';
import type { Logger } from 'pino';
import type { Config } from '../../../config/load-config.js';
import type { CachedLoader } from '../../cache/cached-loader.js';
import { parseWith } from '../../errors/parse-with.js';
import type { CachedRoute } from '../../http/hit-path.js';
import { secretOrEphemeral } from '../../security/secret-or-ephemeral.js';
import type { Upstream } from '../../upstreams/http/upstream.js';
import { createSearchClient } from '../../upstreams/search/search-client.js';
import { ROUTES } from '../route-table.js';
import { createLinkSigner } from './link-signature.js';
import { createRedirectUrlMatcher } from './rp-param.js';
import { createCursorCodec } from './search-cursor.js';
import { negotiateFormat } from './search-format.js';
import { createSearchQuerySchema } from './search-query.js';
import { createSearchRedirect } from './search-redirect.js';
import { createSearchRouter } from './search-router.js';
import { createSearchService, type ResolvedSearch } from './search-service.js';

export interface SearchFeature {
  router: Router;
  /** `GET /api/search` for the hit path: the same schema, negotiation and key as the router. */
  cachedRoute: CachedRoute;
}

/** The search feature from configuration: client, service, router and its cached route. */
export function createSearchFeature(options: {
  config: Config;
  logger: Logger;
  upstream: Upstream;
  /** The same service behind a breaker of its own, for the click-tracking redirect. */
  redirectUpstream: Upstream;
  loader: CachedLoader;
}): SearchFeature {
  const { config, upstream } = options;
  const { search } = config;
  // One key source for cursors and links, so both survive restarts when CURSOR_SECRET is set.
  const secret = secretOrEphemeral(search.cursorSecret, 'CURSOR_SECRET', options.logger);
  const gatewayLinks = search.links === 'gateway' ? createLinkSigner({ secret }) : undefined;
  const service = createSearchService({
    client: createSearchClient({
      upstream,
      clientToken: search.clientToken,
      deadlineMs: search.timeoutMs,
      retryAfterMaxSeconds: config.retryAfterMaxSeconds,
      maxJsonDepth: config.upstreamLimits.maxJsonDepth,
    }),
    loader: options.loader,
    cursors: createCursorCodec({ secret, searchBaseUrl: search.baseUrl }),
    isRedirectUrl: createRedirectUrlMatcher(search.baseUrl),
    windows: search.cache,
    routePath: ROUTES.search.path,
    maxK: search.maxK,
    gatewayLinks,
  });
  const querySchema = createSearchQuerySchema(search.maxK);
  // What the hit path resolved for a request it passed on (a miss): the router reuses it, so a
  // miss parses, validates and hashes its query once (issue 18).
  const resolvedByHitPath = new WeakMap<IncomingMessage, ResolvedSearch>();
  return {
    router: createSearchRouter({
      service,
      querySchema,
      resolved: (req) => resolvedByHitPath.get(req),
      redirect: createSearchRedirect({
        upstream: options.redirectUpstream,
        deadlineMs: search.redirectTimeoutMs,
        retryAfterMaxSeconds: config.retryAfterMaxSeconds,
        ...(gatewayLinks ? { links: gatewayLinks } : {}),
      }),
    }),
    cachedRoute: {
      path: ROUTES.search.path,
      vary: 'Accept',
      keyOf(req, query) {
        const format = negotiateFormat(req);
        // Express 5's default ("simple") query parser is node:querystring: the same input.
        const request = parseWith(querySchema, parseQuery(query), () => undefined);
        if (format === undefined || request === undefined) return undefined;
        try {
          const resolved = service.resolve(request, format);
          resolvedByHitPath.set(req, resolved);
          return resolved.key;
        } catch {
          return undefined; // a forged cursor: the router answers 400
        }
      },
    },
  };
}

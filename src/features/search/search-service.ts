import { toRepresentation, type Representation } from '../../cache/cache-entry.js';
import type { SearchClient, SearchFormat } from '../../upstreams/search/search-client.js';
import type { ResolvedQuery, SearchContext } from '../route-context.js';
import { rerank } from './rerank.js';
import { throughGateway, urlSlots } from './redirect-urls.js';
import { renumberPositions } from './renumber-positions.js';

export interface SearchServiceOptions {
  client: SearchClient;
  isRedirectUrl: (url: string) => boolean;
  /** Path of the gateway's search route, for `next` links. */
  routePath: string;
  search: SearchContext;
}

export interface SearchService {
  /** The upstream's list, reranked, renumbered and serialised once: the bytes sent and stored. */
  build(search: ResolvedQuery, format: SearchFormat, requestId: string): Promise<Representation>;
}

const CONTENT_TYPE = {
  json: 'application/json; charset=utf-8',
  'ld+json': 'application/ld+json; charset=utf-8',
} as const satisfies Record<SearchFormat, string>;

export function createSearchService(options: SearchServiceOptions): SearchService {
  const { client } = options;
  const { cursors, gatewayLinks } = options.search;
  // Signed last, over the final bytes: after the `rp` rewrite and the move to the gateway.
  const relink = gatewayLinks
    ? (url: string) => gatewayLinks.sign(throughGateway(url, `${options.routePath}/url`))
    : undefined;

  return {
    async build(search, format, requestId) {
      const list = await client.search({
        query: search.query,
        format,
        requestId,
        maxItems: search.maxItems,
      });
      const reranked = rerank(list, search.sort);
      if (search.sort !== 'relevance') {
        renumberPositions(
          list.itemListElement,
          reranked.itemListElement,
          options.isRedirectUrl,
          relink,
        );
      } else if (relink) {
        // Upstream order: every `rp` stays as given, only the links move to the gateway.
        for (const product of list.itemListElement) {
          for (const slot of urlSlots(product)) {
            if (options.isRedirectUrl(slot.url)) slot.holder.url = relink(slot.url);
          }
        }
      }
      const { next: upstreamNext, ...rest } = reranked;
      const cursor =
        upstreamNext === undefined ? undefined : cursors.encode(upstreamNext, search.sort);
      const body =
        cursor === undefined ? rest : { ...rest, next: `${options.routePath}?cursor=${cursor}` };
      return toRepresentation(body, CONTENT_TYPE[format]);
    },
  };
}

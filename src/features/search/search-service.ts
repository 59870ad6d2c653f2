import { createHash } from 'node:crypto';
import type { CacheWindows } from '../../../config/load-config.js';
import { toRepresentation, type Representation } from '../../cache/cache-entry.js';
import type { Cached, CachedLoader, LoaderCall } from '../../cache/cached-loader.js';
import type { SearchClient, SearchFormat } from '../../upstreams/search/search-client.js';
import type { LinkSigner } from './link-signature.js';
import { rerank, type SortOrder } from './rerank.js';
import { throughGateway, urlSlots } from './redirect-urls.js';
import { renumberPositions } from './renumber-positions.js';
import type { CursorCodec } from './search-cursor.js';
import type { SearchRequest } from './search-query.js';

export interface SearchServiceOptions {
  client: SearchClient;
  loader: CachedLoader;
  cursors: CursorCodec;
  isRedirectUrl: (url: string) => boolean;
  windows: CacheWindows;
  /** Path of the gateway's search route, for `next` links. */
  routePath: string;
  /** SEARCH_MAX_K: no page is ever longer. */
  maxK: number;
  /**
   * SEARCH_LINKS=gateway: result links go through the gateway's redirect route, signed by this;
   * undefined for SEARCH_LINKS=upstream.
   */
  gatewayLinks: LinkSigner | undefined;
}

/** A validated search as the upstream will see it, and where its answer is cached. */
export interface ResolvedSearch {
  key: string;
  /** Query string for `{SEARCH_BASE_URL}/v1/search`, without '?'. */
  query: string;
  sort: SortOrder;
  format: SearchFormat;
  /** The `k` the upstream is asked for. */
  maxItems: number;
}

export interface SearchService {
  /** Decodes a cursor (INVALID_CURSOR when forged) and names the cache entry: no I/O. */
  resolve(request: SearchRequest, format: SearchFormat): ResolvedSearch;
  search(search: ResolvedSearch, call: LoaderCall & { requestId: string }): Promise<Cached>;
}

/** Bump when the cached representation changes shape, so old entries are never served. */
const KEY_VERSION = 'v3';

const CONTENT_TYPE = {
  json: 'application/json; charset=utf-8',
  'ld+json': 'application/ld+json; charset=utf-8',
} as const satisfies Record<SearchFormat, string>;

/** The search document's query encoding (4.1): URL-encoded, spaces as '+'. */
function encodeQuery(q: string, k: number): string {
  return `q=${encodeURIComponent(q).replaceAll('%20', '+')}&k=${k}`;
}

export function createSearchService(options: SearchServiceOptions): SearchService {
  const { client, loader, cursors, gatewayLinks } = options;
  // Signed last, over the final bytes: after the `rp` rewrite and the move to the gateway.
  const relink = gatewayLinks
    ? (url: string) => gatewayLinks.sign(throughGateway(url, `${options.routePath}/url`))
    : undefined;
  // Cached lists hold signed links: each key has its own entries, so a new CURSOR_SECRET (or
  // an older gateway's unsigned links) is never served from the cache.
  const linksKey = gatewayLinks ? `gateway-${gatewayLinks.keyId}` : 'upstream';

  /** The upstream's list, reranked, renumbered and serialised once: the bytes sent and stored. */
  async function build(search: ResolvedSearch, requestId: string): Promise<Representation> {
    const list = await client.search({
      query: search.query,
      format: search.format,
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
    return toRepresentation(body, CONTENT_TYPE[search.format]);
  }

  return {
    resolve(request, format) {
      // Cursor validation happens before any cache or upstream work: a forged cursor costs nothing.
      const { query, sort } =
        request.kind === 'cursor'
          ? cursors.decode(request.cursor)
          : { query: encodeQuery(request.q, request.k), sort: request.sort };
      const digest = createHash('sha256').update(query).digest('base64url');
      // A cursor's page asks for the k of the search it continues (the upstream's next link).
      const k = Number(new URLSearchParams(query).get('k'));
      const maxItems = Number.isInteger(k) && k > 0 ? Math.min(k, options.maxK) : options.maxK;
      return {
        // The hash tag keeps the entry, its fleet lock and waiters' mark in one cluster slot.
        key: `search:${KEY_VERSION}:${format}:${sort}:${linksKey}:{${digest}}`,
        query,
        sort,
        format,
        maxItems,
      };
    },
    search(search, call) {
      return loader.get(search.key, options.windows, () => build(search, call.requestId), call);
    },
  };
}

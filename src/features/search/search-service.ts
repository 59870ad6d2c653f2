import { createHash } from 'node:crypto';
import type { CacheWindows } from '../../../config/load-config.js';
import type {
  CachedLoader,
  CachedRepresentation,
  Representation,
} from '../../cache/cached-loader.js';
import type { SearchClient, SearchFormat } from '../../upstreams/search/search-client.js';
import { rerank, type SortOrder } from './rerank.js';
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
}

export interface SearchService {
  search(
    request: SearchRequest,
    format: SearchFormat,
    requestId: string,
  ): Promise<CachedRepresentation>;
}

/** Bump when the cached representation changes shape, so old entries are never served. */
const KEY_VERSION = 'v1';

const CONTENT_TYPE: Record<SearchFormat, string> = {
  json: 'application/json; charset=utf-8',
  'ld+json': 'application/ld+json; charset=utf-8',
};

/** The search document's query encoding (4.1): URL-encoded, spaces as '+'. */
function encodeQuery(q: string, k: number): string {
  return `q=${encodeURIComponent(q).replaceAll('%20', '+')}&k=${k}`;
}

export function createSearchService(options: SearchServiceOptions): SearchService {
  const { client, loader, cursors } = options;

  async function build(
    query: string,
    sort: SortOrder,
    format: SearchFormat,
    requestId: string,
  ): Promise<Representation> {
    const list = await client.search({ query, format, requestId });
    const reranked = rerank(list, sort);
    if (sort !== 'relevance')
      renumberPositions(list.itemListElement, reranked.itemListElement, options.isRedirectUrl);
    const { next: upstreamNext, ...rest } = reranked;
    const cursor = upstreamNext === undefined ? undefined : cursors.encode(upstreamNext, sort);
    const body =
      cursor === undefined ? rest : { ...rest, next: `${options.routePath}?cursor=${cursor}` };
    return { body: JSON.stringify(body), contentType: CONTENT_TYPE[format] };
  }

  return {
    search(request, format, requestId) {
      // Cursor validation happens before any cache or upstream work: a forged cursor costs nothing.
      const { query, sort } =
        request.kind === 'cursor'
          ? cursors.decode(request.cursor)
          : { query: encodeQuery(request.q, request.k), sort: request.sort };
      const digest = createHash('sha256').update(query).digest('base64url');
      const key = `search:${KEY_VERSION}:${format}:${sort}:${digest}`;
      return loader.get(key, options.windows, () => build(query, sort, format, requestId));
    },
  };
}

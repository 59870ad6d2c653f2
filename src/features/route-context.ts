import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../../config/load-config.js';
import { secretOrEphemeral } from '../security/secret-or-ephemeral.js';
import { createLinkSigner, type LinkSigner } from './search/link-signature.js';
import { createCursorCodec, type CursorCodec } from './search/search-cursor.js';
import type { SortOrder } from './search/rerank.js';
import type { SearchRequest } from './search/search-query.js';

/**
 * What the route table's configured schemas and cache keys are built with, besides the
 * request: made once from configuration when the gateway is built.
 */
export interface RouteContext {
  /** SEARCH_MAX_K: no page is ever longer. */
  readonly maxK: number;
  /** A digest of CHAT_BASE_URL: chat entries are one realm's. */
  readonly realm: string;
  readonly search: SearchContext;
}

/** A validated search as the upstream will see it. */
export interface ResolvedQuery {
  /** Query string for `{SEARCH_BASE_URL}/v1/search`, without '?'. */
  readonly query: string;
  readonly sort: SortOrder;
  /** The `k` the upstream is asked for. */
  readonly maxItems: number;
  /** SHA-256 of `query`: the part of the key that names the search. */
  readonly digest: string;
}

export interface SearchContext {
  readonly cursors: CursorCodec;
  /** SEARCH_LINKS=gateway: result links go through the gateway, signed by this. */
  readonly gatewayLinks: LinkSigner | undefined;
  /**
   * Cached lists hold signed links: each key has its own entries, so a new CURSOR_SECRET (or an
   * older gateway's unsigned links) is never served from the cache.
   */
  readonly linksKey: string;
  /** Decodes a cursor (INVALID_CURSOR when forged) and names the search: once per request. */
  resolve(request: SearchRequest): ResolvedQuery;
}

/** The search document's query encoding (4.1): URL-encoded, spaces as '+'. */
function encodeQuery(q: string, k: number): string {
  return `q=${encodeURIComponent(q).replaceAll('%20', '+')}&k=${k}`;
}

function createSearchContext(config: Config, logger: Logger): SearchContext {
  const { search } = config;
  // One key source for cursors and links, so both survive restarts when CURSOR_SECRET is set.
  const secret = secretOrEphemeral(search.cursorSecret, 'CURSOR_SECRET', logger);
  const gatewayLinks = search.links === 'gateway' ? createLinkSigner({ secret }) : undefined;
  const cursors = createCursorCodec({ secret, searchBaseUrl: search.baseUrl });
  // The hit path and the route resolve the same validated object: the work is done once.
  const resolved = new WeakMap<SearchRequest, ResolvedQuery>();
  const resolve = (request: SearchRequest): ResolvedQuery => {
    // Cursor validation happens before any cache or upstream work: a forged cursor costs nothing.
    const { query, sort } =
      request.kind === 'cursor'
        ? cursors.decode(request.cursor)
        : { query: encodeQuery(request.q, request.k), sort: request.sort };
    // A cursor's page asks for the k of the search it continues (the upstream's next link).
    const k = request.kind === 'cursor' ? Number(new URLSearchParams(query).get('k')) : request.k;
    const maxItems = Number.isInteger(k) && k > 0 ? Math.min(k, search.maxK) : search.maxK;
    const digest = createHash('sha256').update(query).digest('base64url');
    return { query, sort, maxItems, digest };
  };
  return {
    cursors,
    gatewayLinks,
    linksKey: gatewayLinks ? `gateway-${gatewayLinks.keyId}` : 'upstream',
    resolve(request) {
      let found = resolved.get(request);
      if (found === undefined) {
        found = resolve(request);
        resolved.set(request, found);
      }
      return found;
    },
  };
}

export function createRouteContext(options: { config: Config; logger: Logger }): RouteContext {
  const { config, logger } = options;
  return {
    maxK: config.search.maxK,
    realm: createHash('sha256').update(config.chat.baseUrl).digest('base64url').slice(0, 16),
    search: createSearchContext(config, logger),
  };
}

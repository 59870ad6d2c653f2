import { parseWith } from '../../errors/parse-with.js';
import { parseJsonBody, schemaBreach } from '../http/transport-errors.js';
import type { Upstream, UpstreamResponse } from '../http/upstream.js';
import { toUpstreamError } from '../to-upstream-error.js';
import { SERVICE_NAME } from '../upstream-failures.js';
import { ResultListInPlace, type ResultList } from './search-schemas.js';

export type SearchFormat = 'json' | 'ld+json';

export interface SearchClientOptions {
  upstream: Upstream;
  clientToken: string;
  deadlineMs: number;
  /** Upper bound of a passed-on Retry-After. */
  retryAfterMaxSeconds: number;
  /** UPSTREAM_MAX_JSON_DEPTH. */
  maxJsonDepth: number;
}

export interface SearchCall {
  /** The upstream query string without '?', already encoded. */
  query: string;
  format: SearchFormat;
  requestId: string;
  /** Items asked for (`k`): a longer list is cut to it before anything else looks at it. */
  maxItems: number;
}

export interface SearchClient {
  search(call: SearchCall): Promise<ResultList>;
}

const ACCEPT: Record<SearchFormat, string> = {
  json: 'application/json',
  'ld+json': 'application/ld+json',
};

/** Talks to `{SEARCH_BASE_URL}/v1/search` with the client token (search document 4.1, 5). */
export function createSearchClient(options: SearchClientOptions): SearchClient {
  const { upstream } = options;
  const accept = (response: UpstreamResponse, maxItems: number): ResultList => {
    if (response.status !== 200) {
      const { retryAfterMaxSeconds } = options;
      throw toUpstreamError({
        source: 'search',
        operation: 'search',
        ...response,
        retryAfterMaxSeconds,
      });
    }
    const json = parseJsonBody(response, 'search', options.maxJsonDepth);
    return parseWith(ResultListInPlace, cutToItems(json, maxItems), (error) => {
      throw schemaBreach(
        'search',
        `${SERVICE_NAME.search} sent a result list that breaks its schema.`,
        error,
      );
    });
  };
  return {
    search: (call) =>
      upstream.call({
        operation: 'search',
        method: 'GET',
        path: `/v1/search?${call.query}`,
        headers: {
          accept: ACCEPT[call.format],
          'service-client-token': options.clientToken,
        },
        requestId: call.requestId,
        deadlineMs: options.deadlineMs,
        retry: true,
        accept: (response) => accept(response, call.maxItems),
      }),
  };
}

/**
 * The document promises at most k items (sections 2.1, 8); a longer list is not an error
 * (contract section 6, Limits): it is cut to k, scores with it, before it is validated,
 * reranked, stored or sent.
 */
function cutToItems(json: unknown, maxItems: number): unknown {
  if (typeof json !== 'object' || json === null) return json;
  const list = json as { itemListElement?: unknown; itemScore?: unknown };
  if (Array.isArray(list.itemListElement) && list.itemListElement.length > maxItems) {
    list.itemListElement.length = maxItems;
    if (Array.isArray(list.itemScore) && list.itemScore.length > maxItems) {
      list.itemScore.length = maxItems;
    }
  }
  return json;
}

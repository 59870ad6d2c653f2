import type { Dispatcher } from 'undici';
import { AppError } from '../../errors/app-error.js';
import {
  parseJsonBody,
  retryAfterSeconds,
  sendUpstream,
  type UpstreamResponse,
} from '../http/send-upstream.js';
import type { Breaker } from '../http/circuit-breaker.js';
import { ResultList } from './search-schemas.js';

export type SearchFormat = 'json' | 'ld+json';

export interface SearchClientOptions {
  pool: Dispatcher;
  breaker: Breaker;
  /** Path prefix of SEARCH_BASE_URL ('' when it has none). */
  basePath: string;
  clientToken: string;
  deadlineMs: number;
}

export interface SearchCall {
  /** The upstream query string without '?', already encoded. */
  query: string;
  format: SearchFormat;
  requestId: string;
}

export interface SearchClient {
  search(call: SearchCall): Promise<ResultList>;
}

/** Talks to `{SEARCH_BASE_URL}/v1/search` with the client token (search document 4.1, 5). */
export function createSearchClient(options: SearchClientOptions): SearchClient {
  async function searchOnce(call: SearchCall): Promise<ResultList> {
    const response = await sendUpstream(options.pool, {
      source: 'search',
      method: 'GET',
      path: `${options.basePath}/v1/search?${call.query}`,
      headers: {
        accept: call.format === 'ld+json' ? 'application/ld+json' : 'application/json',
        'service-client-token': options.clientToken,
        'x-request-id': call.requestId,
      },
      deadlineMs: options.deadlineMs,
      retry: true,
    });
    if (response.status !== 200) throw toSearchError(response);
    const parsed = ResultList.safeParse(parseJsonBody(response, 'search'));
    if (!parsed.success) {
      throw new AppError(
        'UPSTREAM_BAD_RESPONSE',
        'The search service sent a result list that breaks its schema.',
        {
          source: 'search',
          cause: parsed.error,
        },
      );
    }
    return parsed.data;
  }

  return {
    search: (call) => options.breaker.run(() => searchOnce(call)),
  };
}

/** The document gives only status classes (section 7); every non-200 is the gateway's problem. */
function toSearchError(response: UpstreamResponse): AppError {
  const { status } = response;
  if (status === 429) {
    return new AppError(
      'RATE_LIMITED',
      'The search service is rate limiting requests; try again later.',
      {
        source: 'search',
        retryAfterSeconds: retryAfterSeconds(response.headers['retry-after']),
      },
    );
  }
  if (status === 401 || status === 403) {
    return new AppError(
      'UPSTREAM_AUTH_FAILED',
      "The search service rejected the gateway's credentials.",
      {
        source: 'search',
      },
    );
  }
  if (status >= 500) {
    return new AppError('UPSTREAM_ERROR', `The search service failed (HTTP ${status}).`, {
      source: 'search',
    });
  }
  return new AppError(
    'UPSTREAM_BAD_RESPONSE',
    `The search service answered with unexpected HTTP ${status}.`,
    {
      source: 'search',
    },
  );
}

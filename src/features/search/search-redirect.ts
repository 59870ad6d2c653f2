import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Upstream } from '../../upstreams/http/upstream.js';
import { toUpstreamError } from '../../upstreams/to-upstream-error.js';
import type { LinkSigner } from './link-signature.js';

/** Browser headers worth passing to a click tracker; cookies and credentials never travel. */
const FORWARDED_HEADERS = new Set(['user-agent', 'accept', 'accept-language']);

/**
 * `GET /api/search/url` (contract section 2): the click-tracking redirect, proxied to
 * `{SEARCH_BASE_URL}/v1/url` with the query string byte-for-byte. The upstream's 3xx and
 * `Location` pass through; redirects are never followed; anything else becomes the envelope.
 * No client token is sent: the search document (4.2) says the endpoint needs none.
 * With SEARCH_LINKS=gateway (`links` given) only links the gateway signed are followed, and the
 * query goes on without its `sig`; anything else is INVALID_LINK before any outbound call, so
 * the gateway's origin is no open redirector (contract section 5).
 */
export function createSearchRedirect(options: {
  /** The search service with the redirect's own breaker (contract section 6). */
  upstream: Upstream;
  deadlineMs: number;
  retryAfterMaxSeconds: number;
  links?: LinkSigner;
}): (req: IncomingMessage & { originalUrl: string }, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    const raw = req.originalUrl;
    const question = raw.indexOf('?');
    const received = question < 0 ? undefined : raw.slice(question + 1);
    let query = received;
    if (options.links) {
      const signed = options.links.verify(received);
      // A signed link with nothing before its `sig` had no query of its own.
      query = signed === '' ? undefined : signed;
    }
    return options.upstream.proxy(req, res, {
      operation: 'redirect',
      path: `/v1/url${query === undefined ? '' : `?${query}`}`,
      forwardHeaders: FORWARDED_HEADERS,
      requestId: req.id,
      deadlineMs: options.deadlineMs,
      respond(upstream, response) {
        const status = upstream.statusCode ?? 502;
        const location = upstream.headers.location;
        if (status >= 300 && status < 400 && location !== undefined) {
          response.writeHead(status, { Location: location, 'Cache-Control': 'no-store' }).end();
          return undefined;
        }
        // Every other answer is a failure, mapped with the search's others (upstream-failures.ts).
        return toUpstreamError({
          source: 'search',
          operation: 'redirect',
          status,
          headers: upstream.headers,
          retryAfterMaxSeconds: options.retryAfterMaxSeconds,
        });
      },
    });
  };
}

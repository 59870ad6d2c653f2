import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError } from '../../errors/app-error.js';
import { retryAfterSeconds } from '../../resilience/retry-after.js';
import type { Upstream } from '../../upstreams/http/upstream.js';

/** Browser headers worth passing to a click tracker; cookies and credentials never travel. */
const FORWARDED_HEADERS = new Set(['user-agent', 'accept', 'accept-language']);

/**
 * `GET /api/search/url` (contract section 2): the click-tracking redirect, proxied to
 * `{SEARCH_BASE_URL}/v1/url` with the query string byte-for-byte. The upstream's 3xx and
 * `Location` pass through; redirects are never followed; anything else becomes the envelope.
 * No client token is sent: the search document (4.2) says the endpoint needs none.
 */
export function createSearchRedirect(options: {
  upstream: Upstream;
  deadlineMs: number;
  retryAfterMaxSeconds: number;
}): (req: IncomingMessage & { originalUrl: string }, res: ServerResponse) => Promise<void> {
  return (req, res) => {
    const raw = req.originalUrl;
    const question = raw.indexOf('?');
    return options.upstream.proxy(req, res, {
      operation: 'redirect',
      path: `/v1/url${question < 0 ? '' : raw.slice(question)}`,
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
        return redirectError(status, upstream.headers['retry-after'], options.retryAfterMaxSeconds);
      },
    });
  };
}

function redirectError(
  status: number,
  retryAfter: string | undefined,
  retryAfterMaxSeconds: number,
): AppError {
  if (status === 429) {
    return new AppError(
      'RATE_LIMITED',
      'The search service is rate limiting requests; try again later.',
      {
        source: 'search',
        retryAfterSeconds: retryAfterSeconds(retryAfter, { maxSeconds: retryAfterMaxSeconds }),
      },
    );
  }
  if (status >= 400 && status < 500) {
    // The query string is the browser's own, forwarded untouched: a rejection is about the link.
    return new AppError(
      'BAD_REQUEST',
      `The search service rejected this redirect link (HTTP ${status}).`,
      { source: 'search' },
    );
  }
  return new AppError(
    'UPSTREAM_ERROR',
    `The search service answered the redirect with HTTP ${status}.`,
    { source: 'search' },
  );
}

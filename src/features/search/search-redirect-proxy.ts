import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import { createProxyMiddleware, proxyEventsPlugin } from 'http-proxy-middleware';
import { AppError } from '../../errors/app-error.js';
import { sendProblem } from '../../http/error-handler.js';
import { retryAfterSeconds } from '../../upstreams/http/send-upstream.js';

export interface RedirectProxyOptions {
  searchBaseUrl: string;
  deadlineMs: number;
}

/** Browser headers worth passing to a click tracker; cookies and credentials never travel. */
const FORWARDED_HEADERS = new Set(['host', 'user-agent', 'accept', 'accept-language']);

class ProxyDeadline extends Error {}

/**
 * `GET /api/search/url` (contract section 2): the click-tracking redirect, proxied to
 * `{SEARCH_BASE_URL}/v1/url` with the query string byte-for-byte. The upstream's 3xx and
 * `Location` pass through; redirects are never followed; anything else becomes the envelope.
 * No client token is sent: the search document (4.2) says the endpoint needs none.
 */
export function createSearchRedirectProxy(options: RedirectProxyOptions): RequestHandler {
  const base = new URL(options.searchBaseUrl);
  const endpointPath = `${base.pathname.replace(/\/$/, '')}/v1/url`;

  const proxy = createProxyMiddleware({
    target: base.origin,
    changeOrigin: true,
    // toProxy: http-proxy sends the rewritten path as is instead of re-parsing it with the
    // deprecated url.parse(); the test of this route checks the bytes on the wire.
    toProxy: true,
    pathRewrite: (_path, req) => {
      const raw = (req as Request).originalUrl;
      const question = raw.indexOf('?');
      return `${endpointPath}${question < 0 ? '' : raw.slice(question)}`;
    },
    followRedirects: false,
    selfHandleResponse: true,
    // The default plugins log through console and answer errors in plain text; the `on`
    // handlers below (registered by proxyEventsPlugin) answer in the envelope instead.
    ejectPlugins: true,
    plugins: [proxyEventsPlugin],
    on: {
      proxyReq(proxyReq, req) {
        for (const name of proxyReq.getHeaderNames()) {
          if (!FORWARDED_HEADERS.has(name)) proxyReq.removeHeader(name);
        }
        proxyReq.setHeader('x-request-id', req.id);
        proxyReq.setTimeout(options.deadlineMs, () => proxyReq.destroy(new ProxyDeadline()));
      },
      proxyRes(proxyRes, req, res) {
        proxyRes.resume();
        const status = proxyRes.statusCode ?? 502;
        const location = proxyRes.headers.location;
        if (status >= 300 && status < 400 && location !== undefined) {
          res.writeHead(status, { Location: location, 'Cache-Control': 'no-store' }).end();
          return;
        }
        sendProblem(
          req as Request,
          res as Response,
          redirectError(status, proxyRes.headers['retry-after']),
        );
      },
      error(error, req, res) {
        const response = res as ServerResponse<IncomingMessage>;
        if (!('setHeader' in response) || response.headersSent) return;
        const appError =
          error instanceof ProxyDeadline
            ? new AppError(
                'UPSTREAM_TIMEOUT',
                `The search service did not answer within ${options.deadlineMs} ms.`,
                {
                  source: 'search',
                },
              )
            : new AppError('UPSTREAM_UNAVAILABLE', 'The search service could not be reached.', {
                source: 'search',
                cause: error,
              });
        sendProblem(req as Request, response as Response, appError);
      },
    },
  });
  return proxy;
}

function redirectError(status: number, retryAfter: string | undefined): AppError {
  if (status === 429) {
    return new AppError(
      'RATE_LIMITED',
      'The search service is rate limiting requests; try again later.',
      {
        source: 'search',
        retryAfterSeconds: retryAfterSeconds(retryAfter),
      },
    );
  }
  if (status >= 400 && status < 500) {
    // The query string is the browser's own, forwarded untouched: a rejection is about the link.
    return new AppError(
      'BAD_REQUEST',
      `The search service rejected this redirect link (HTTP ${status}).`,
      {
        source: 'search',
      },
    );
  }
  return new AppError(
    'UPSTREAM_ERROR',
    `The search service answered the redirect with HTTP ${status}.`,
    {
      source: 'search',
    },
  );
}

import {
  Agent as HttpAgent,
  type ClientRequest,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { createProxyMiddleware, proxyEventsPlugin } from 'http-proxy-middleware';
import { AppError } from '../../errors/app-error.js';
import {
  TRACE_HEADERS,
  outgoingTraceHeaders,
  traceHeadersFromSdk,
} from '../../observability/trace-context.js';
import { toUpstreamError } from '../to-upstream-error.js';
import type { UpstreamSource } from '../upstream-failures.js';
import type { ProxyCall } from './upstream-call.js';

class ProxyDeadline extends Error {}

/** A proxied request under way: its call, the request sent upstream, and how it ends. */
interface Pending {
  call: ProxyCall;
  upstreamRequest?: ClientRequest;
  settle(error?: unknown): void;
}

export interface ProxyTransport {
  /** Proxies a browser request within the call's deadline; failures mapped. */
  proxy(req: IncomingMessage, res: ServerResponse, call: ProxyCall): Promise<void>;
  /** Destroys the agent's sockets. */
  close(): void;
}

/** A browser request proxied byte for byte with http-proxy-middleware (the redirect). */
export function createProxyTransport(options: {
  source: UpstreamSource;
  base: URL;
  basePath: string;
  maxDeadlineMs: number;
  connections: number;
}): ProxyTransport {
  const { source, base, basePath } = options;
  // The redirect proxy: one http-proxy-middleware instance; each request's own state (path,
  // deadline, outcome) travels in this map, keyed by the browser's request.
  const agent = new (base.protocol === 'https:' ? HttpsAgent : HttpAgent)({
    keepAlive: true,
    maxSockets: options.connections,
    timeout: options.maxDeadlineMs,
  });
  const pending = new WeakMap<IncomingMessage, Pending>();
  const proxyMiddleware = createProxyMiddleware<IncomingMessage, ServerResponse>({
    target: base.origin,
    agent,
    changeOrigin: true,
    // toProxy: the path goes out as given instead of re-parsed with the deprecated url.parse().
    toProxy: true,
    pathRewrite: (_path, req) => `${basePath}${pending.get(req)?.call.path ?? '/'}`,
    followRedirects: false,
    selfHandleResponse: true,
    // The default plugins log through console and answer errors in plain text; the outcome is
    // settled here instead and answered by the one error handler.
    ejectPlugins: true,
    plugins: [proxyEventsPlugin],
    on: {
      proxyReq(upstreamRequest, req) {
        const state = pending.get(req);
        if (!state) return;
        state.upstreamRequest = upstreamRequest;
        passHeaders(upstreamRequest, state.call);
      },
      proxyRes(upstreamResponse, req, res) {
        upstreamResponse.resume();
        const state = pending.get(req);
        state?.settle(state.call.respond(upstreamResponse, res));
      },
      error(error, req) {
        pending.get(req)?.settle(error);
      },
    },
  });

  function proxy(req: IncomingMessage, res: ServerResponse, call: ProxyCall): Promise<void> {
    return new Promise((resolve, reject) => {
      const state: Pending = {
        call,
        settle(error) {
          clearTimeout(timer);
          pending.delete(req);
          if (error === undefined) resolve();
          // A browser that left is nobody's failure: there is no one to answer.
          else if (res.destroyed) resolve();
          else if (error instanceof AppError) reject(error);
          else {
            const { operation, deadlineMs } = call;
            const deadlinePassed = error instanceof ProxyDeadline;
            reject(toUpstreamError({ source, operation, error, deadlineMs, deadlinePassed }));
          }
        },
      };
      // A hard deadline over connect, headers and all: an upstream dribbling its headers is
      // cut at it, not only one that stays silent.
      const timer = setTimeout(() => {
        if (state.upstreamRequest) state.upstreamRequest.destroy(new ProxyDeadline());
        else state.settle(new ProxyDeadline());
      }, call.deadlineMs);
      pending.set(req, state);
      void proxyMiddleware(req, res, (error?: unknown) =>
        state.settle(error ?? new Error('the proxy did not take the request')),
      );
    });
  }

  return { proxy, close: () => agent.destroy() };
}

/**
 * What the proxied request carries: Host, the headers the call lets travel, the trace context
 * (the SDK's own, or the caller's once validated) and the request id; nothing else the browser
 * sent.
 */
function passHeaders(upstreamRequest: ClientRequest, call: ProxyCall): void {
  const sdkTrace = traceHeadersFromSdk();
  for (const name of upstreamRequest.getHeaderNames()) {
    const keep =
      name === 'host' || call.forwardHeaders.has(name) || (sdkTrace && TRACE_HEADERS.has(name));
    if (!keep) upstreamRequest.removeHeader(name);
  }
  for (const [name, value] of Object.entries(outgoingTraceHeaders())) {
    upstreamRequest.setHeader(name, value);
  }
  upstreamRequest.setHeader('x-request-id', call.requestId);
}

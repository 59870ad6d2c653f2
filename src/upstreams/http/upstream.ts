import {
  Agent as HttpAgent,
  type ClientRequest,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { createProxyMiddleware, proxyEventsPlugin } from 'http-proxy-middleware';
import type { Logger } from 'pino';
import { Pool } from 'undici';
import type { BreakerThresholds } from '../../../config/load-config.js';
import { AppError } from '../../errors/app-error.js';
import { isUpstreamFault, upstreamOutcome } from '../../errors/upstream-failure.js';
import type { Metrics } from '../../observability/metrics.js';
import {
  TRACE_HEADERS,
  outgoingTraceHeaders,
  traceHeadersFromSdk,
} from '../../observability/trace-context.js';
import { createBreaker, type Breaker } from '../../resilience/circuit-breaker.js';
import { toTransportError, type UpstreamSource, SERVICE_NAME } from './transport-errors.js';

export interface UpstreamOptions {
  source: UpstreamSource;
  /** Origin plus an optional path prefix, without a trailing slash (config's base URL). */
  baseUrl: string;
  connectTimeoutMs: number;
  /** The longest deadline any call uses: the pool's own timers are backstops at this length. */
  maxDeadlineMs: number;
  breaker: BreakerThresholds;
  /**
   * The breaker's name in logs, `/readyz` and `gateway_circuit_breaker_state`; the source by
   * default. A second Upstream on the same service with its own name has a breaker of its own.
   */
  breakerName?: string;
  logger: Logger;
  /** Bodies longer than this are refused while they arrive (a 502). */
  maxResponseBytes: number;
  /** Connections kept to this upstream at most (JSON pool and proxy agent each). */
  connections: number;
  /** Every call's duration and outcome go to gateway_upstream_request_duration_seconds. */
  metrics: Metrics;
}

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body exactly as received, read once. */
  body: Buffer;
}

export interface UpstreamCall<T> {
  /** What the call is for, as the metrics' `operation` label says it (e.g. `search`, `drafts`). */
  operation: string;
  method: 'GET' | 'POST' | 'DELETE';
  /** Path and query below the base URL, already encoded: the pool fixes the origin. */
  path: string;
  /** Built from configuration by the client, never copied from the browser. */
  headers: Record<string, string>;
  body?: string;
  requestId: string;
  deadlineMs: number;
  /**
   * Idempotent reads may be retried once, on a refused or reset connection or a 502/503/504,
   * after a jittered pause, and only if enough of the deadline is left. Never for writes.
   */
  retry?: boolean;
  /**
   * A long-poll (the chat server's event queue): a connection pool of its own whose timeouts
   * sit above the call's deadline, no retry, and no breaker: a long-poll that ends without
   * events, or slowly, is not a failing upstream.
   */
  longPoll?: boolean;
  /** Ends the call early (a stop, a lost lease); it then fails like a timeout. */
  signal?: AbortSignal;
  /**
   * Turns the response into the call's value, or throws the contract's error for it. It runs
   * inside the breaker, so a broken body counts against the upstream like a refused connection.
   */
  accept(response: UpstreamResponse): T;
}

export interface ProxyCall {
  operation: string;
  /** Path and query below the base URL, exactly as they go on the wire. */
  path: string;
  /** Request headers that may travel (lower case); every other one is dropped. */
  forwardHeaders: ReadonlySet<string>;
  requestId: string;
  deadlineMs: number;
  /**
   * Gets the upstream's response head: writes the answer to `res`, or returns the error to
   * answer with instead (which the breaker then judges like any other).
   */
  respond(upstream: IncomingMessage, res: ServerResponse): AppError | undefined;
}

/**
 * One upstream service as the gateway calls it: its base URL, connection pools, breaker,
 * deadlines and the mapping of transport failures. Every call, JSON or proxied, goes through
 * here, so a deadline, the request id, the breaker and the error mapping cannot be skipped.
 */
export interface Upstream {
  readonly source: UpstreamSource;
  readonly breaker: Breaker;
  call<T>(call: UpstreamCall<T>): Promise<T>;
  /** Proxies a browser request with http-proxy-middleware: the click-tracking redirect. */
  proxy(req: IncomingMessage, res: ServerResponse, call: ProxyCall): Promise<void>;
  /** Waits for calls under way, or with `force` destroys them. */
  close(options?: { force?: boolean }): Promise<void>;
}

const RETRYABLE_STATUS = new Set([502, 503, 504]);
const RETRY_PAUSE_MS = { min: 25, max: 100 };
/** A retry is only worth it with this much of the deadline left after the pause. */
const RETRY_MIN_LEFT_MS = 250;

class ProxyDeadline extends Error {}

export function createUpstream(options: UpstreamOptions): Upstream {
  const { source } = options;
  const base = new URL(options.baseUrl);
  const basePath = base.pathname.replace(/\/$/, '');
  const service = SERVICE_NAME[source];
  const breaker = createBreaker({
    name: options.breakerName ?? source,
    thresholds: options.breaker,
    logger: options.logger,
    isFailure: isUpstreamFault,
    openError: (retryAfterSeconds) =>
      new AppError('SERVICE_UNAVAILABLE', `${service} is failing; calls are paused briefly.`, {
        source,
        retryAfterSeconds,
      }),
  });
  // undici's own header and body timeouts default to 300 s; every call carries its own
  // deadline, and these are backstops at the longest one so no socket outlives it.
  const pool = new Pool(base.origin, {
    connections: options.connections,
    connect: { timeout: options.connectTimeoutMs },
    headersTimeout: options.maxDeadlineMs,
    bodyTimeout: options.maxDeadlineMs,
    keepAliveTimeout: 4_000,
    maxResponseSize: options.maxResponseBytes,
  });

  // Created on the first long-poll: its header and body timeouts must outlast the poll.
  let longPool: Pool | undefined;
  const poolFor = (call: UpstreamCall<unknown>): Pool => {
    if (!call.longPoll) return pool;
    longPool ??= new Pool(base.origin, {
      connections: 2,
      connect: { timeout: options.connectTimeoutMs },
      headersTimeout: 0,
      bodyTimeout: 0,
      maxResponseSize: options.maxResponseBytes,
    });
    return longPool;
  };

  async function send(call: UpstreamCall<unknown>, signal: AbortSignal): Promise<UpstreamResponse> {
    const response = await poolFor(call).request({
      method: call.method,
      path: `${basePath}${call.path}`,
      headers: { ...call.headers, ...outgoingTraceHeaders(), 'x-request-id': call.requestId },
      body: call.body ?? null,
      signal,
    });
    return {
      status: response.statusCode,
      headers: response.headers,
      body: Buffer.from(await response.body.arrayBuffer()),
    };
  }

  async function attempt(call: UpstreamCall<unknown>): Promise<UpstreamResponse> {
    // One deadline for the whole call, retry and body included: the browser's wait is bounded.
    const signal = call.signal
      ? AbortSignal.any([AbortSignal.timeout(call.deadlineMs), call.signal])
      : AbortSignal.timeout(call.deadlineMs);
    const deadline = Date.now() + call.deadlineMs;
    const retryPause = () => {
      const pause = RETRY_PAUSE_MS.min + Math.random() * (RETRY_PAUSE_MS.max - RETRY_PAUSE_MS.min);
      const left = deadline - Date.now() - pause;
      return left >= Math.min(RETRY_MIN_LEFT_MS, call.deadlineMs / 2) ? pause : undefined;
    };
    for (let n = 0; ; n += 1) {
      const mayRetry = call.retry === true && n === 0;
      let response: UpstreamResponse;
      try {
        response = await send(call, signal);
      } catch (error) {
        const failure = toTransportError(error, source, call.deadlineMs, signal.aborted);
        const pause =
          mayRetry && failure.code === 'UPSTREAM_UNAVAILABLE' ? retryPause() : undefined;
        if (pause === undefined) throw failure;
        await sleep(pause);
        continue;
      }
      const pause = mayRetry && RETRYABLE_STATUS.has(response.status) ? retryPause() : undefined;
      if (pause === undefined) return response;
      await sleep(pause);
    }
  }

  // The redirect proxy: one http-proxy-middleware instance; each request's own state (path,
  // deadline, outcome) travels in this map, keyed by the browser's request.
  const agent = new (base.protocol === 'https:' ? HttpsAgent : HttpAgent)({
    keepAlive: true,
    maxSockets: options.connections,
    timeout: options.maxDeadlineMs,
  });
  interface Pending {
    call: ProxyCall;
    upstreamRequest?: ClientRequest;
    settle(error?: unknown): void;
  }
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
        // The SDK's trace headers stay; a browser's own are passed on only once validated.
        const sdkTrace = traceHeadersFromSdk();
        for (const name of upstreamRequest.getHeaderNames()) {
          const keep =
            name === 'host' ||
            state.call.forwardHeaders.has(name) ||
            (sdkTrace && TRACE_HEADERS.has(name));
          if (!keep) upstreamRequest.removeHeader(name);
        }
        for (const [name, value] of Object.entries(outgoingTraceHeaders())) {
          upstreamRequest.setHeader(name, value);
        }
        upstreamRequest.setHeader('x-request-id', state.call.requestId);
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

  function proxyOnce(req: IncomingMessage, res: ServerResponse, call: ProxyCall): Promise<void> {
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
          else
            reject(
              toTransportError(error, source, call.deadlineMs, error instanceof ProxyDeadline),
            );
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

  /** Runs a call through the breaker (unless it is not `guarded`), recording its outcome. */
  async function measured<T>(operation: string, run: () => Promise<T>, guarded = true): Promise<T> {
    const started = performance.now();
    let outcome = 'success';
    try {
      return await (guarded ? breaker.run(run) : run());
    } catch (error) {
      outcome = upstreamOutcome(error);
      throw error;
    } finally {
      options.metrics.observeUpstream(
        source,
        operation,
        outcome,
        (performance.now() - started) / 1000,
      );
    }
  }

  return {
    source,
    breaker,
    call: (call) =>
      measured(call.operation, async () => call.accept(await attempt(call)), !call.longPoll),
    proxy: (req, res, call) => measured(call.operation, () => proxyOnce(req, res, call)),
    async close(closing = {}) {
      breaker.shutdown();
      agent.destroy();
      const pools = longPool === undefined ? [pool] : [pool, longPool];
      await Promise.all(
        pools.map((p) => (closing.force ? p.destroy() : p.close()).catch(() => undefined)),
      );
    },
  };
}

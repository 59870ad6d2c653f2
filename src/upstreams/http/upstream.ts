import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { BreakerThresholds } from '../../../config/load-config.js';
import { AppError } from '../../errors/app-error.js';
import { isUpstreamFault, upstreamOutcome } from '../../errors/upstream-failure.js';
import type { Metrics } from '../../observability/metrics.js';
import { createBreaker, type Breaker } from '../../resilience/circuit-breaker.js';
import { createJsonTransport } from './json-transport.js';
import { createProxyTransport } from './proxy-transport.js';
import { SERVICE_NAME, type UpstreamSource } from '../upstream-failures.js';
import type { ProxyCall, UpstreamCall } from './upstream-call.js';

export type { ProxyCall, UpstreamCall, UpstreamResponse } from './upstream-call.js';

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

/**
 * One upstream service as the gateway calls it: its base URL, connection pools, breaker,
 * deadlines and the mapping of its failures (upstream-failures.ts). Every call, JSON or
 * proxied, goes through here, so a deadline, the request id, the breaker and the error mapping
 * cannot be skipped.
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
  const json = createJsonTransport({ ...options, base, basePath });
  const proxy = createProxyTransport({ ...options, base, basePath });

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
    call: (call) => measured(call.operation, () => json.send(call), !call.longPoll),
    proxy: (req, res, call) => measured(call.operation, () => proxy.proxy(req, res, call)),
    async close(closing = {}) {
      breaker.shutdown();
      proxy.close();
      await json.close(closing.force === true);
    },
  };
}

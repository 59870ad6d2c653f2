import type { RequestListener, Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { ConfigError, type Config } from '../../config/load-config.js';
import type { CachedLoader } from '../cache/cached-loader.js';
import type { CacheStore } from '../cache/cache-store.js';
import type { Readiness } from '../health/readiness.js';
import { connectionCap, openFilesLimit } from '../http/connection-cap.js';
import { createHttpServer, type HttpServer } from '../http/http-server.js';
import { operationsLimits } from '../http/ops-limits.js';
import { createLifecycle, type Lifecycle } from '../lifecycle/lifecycle.js';
import { createGatewayParts } from './parts.js';

/**
 * The gateway as one object: built from configuration, it owns connect → listen → close in
 * the one order that main, the demo, the tests and the benchmark all use.
 */
export interface Gateway {
  /** The request listener (edge, hit path, app): tests may drive it in-process. */
  readonly handler: RequestListener;
  readonly readiness: Readiness;
  readonly loader: CachedLoader;
  readonly cache: CacheStore;
  /** The paths the hit path answers before Express: every cached route of the table. */
  readonly hitPaths: readonly string[];
  /** Of those, the paths whose misses it answers too: the cached routes without a guard. */
  readonly answeredInFront: readonly string[];
  /** Connects Redis (a Redis that is down is a degraded cache, never a failed start), then listens. */
  start(): Promise<void>;
  /** `http://host:port` it listens on; throws before start(). */
  readonly url: string;
  /** The operations listener's `http://host:port` (OPS_PORT), when there is one. */
  readonly opsUrl: string | undefined;
  readonly server: Server;
  /**
   * Graceful stop: /readyz turns 503 at once; new connections are still accepted for the drain
   * delay (load balancers need a probe or two to notice); then the listener closes, idle
   * keep-alive sockets close, in-flight requests finish (answered with Connection: close),
   * background refreshes and cache writes settle, and pools and Redis close. Past
   * SHUTDOWN_TIMEOUT_MS every connection and upstream call is cut. True when clean. It is the
   * lifecycle's stop: each part registered its own phases where it was built.
   */
  stop(): Promise<boolean>;
}

export interface GatewayOptions {
  config: Config;
  logger: Logger;
  /**
   * The clock sessions, cache entries (fresh, stale, error windows) and in-process rate-limit
   * windows run by; tests move it instead of waiting (default Date.now).
   */
  now?: () => number;
}

/** How long start() waits for Redis before serving without it (it keeps reconnecting). */
const REDIS_CONNECT_WAIT_MS = 1000;
/** Connections the operations listener takes at once: probes and a few scrapers. */
const OPS_MAX_CONNECTIONS = 64;

export function createGateway(options: GatewayOptions): Gateway {
  const { config, logger } = options;
  const maxConnections = clientConnections(config);
  // The stop's phases and their order (lifecycle.ts): each part below registers its own.
  const lifecycle = createLifecycle({
    logger,
    drainDelayMs: config.shutdownDrainDelayMs,
    timeoutMs: config.shutdownTimeoutMs,
  });
  const parts = createGatewayParts({
    config,
    logger,
    now: options.now ?? Date.now,
    lifecycle,
    maxConnections,
  });
  const http = createPublicListener({ config, logger, lifecycle, maxConnections, parts });
  const ops = parts.opsHandler
    ? createOpsListener({ config, logger, lifecycle, handler: parts.opsHandler })
    : undefined;
  let url: string | undefined;
  let opsUrl: string | undefined;

  return {
    handler: parts.handler,
    readiness: parts.readiness,
    loader: parts.loader,
    cache: parts.cache,
    hitPaths: parts.hitPaths,
    answeredInFront: parts.answeredInFront,
    server: http.server,
    get url() {
      if (url === undefined) throw new Error('the gateway is not listening');
      return url;
    },
    get opsUrl() {
      return opsUrl;
    },
    async start() {
      warnOfShortTimeout(config, logger);
      await connect({ config, logger, lifecycle });
      // A stop that began while Redis was connecting wins: nothing starts listening after it.
      if (parts.readiness.draining) return;
      url = await http.listen(config.port, config.host);
      parts.chatEvents?.start();
      if (ops && config.opsPort !== undefined)
        opsUrl = await ops.listen(config.opsPort, config.host);
      logger.info({ maxConnections }, 'client connections capped');
    },
    stop: () => lifecycle.close(),
  };
}

/** MAX_CONNECTIONS as the open-files limit allows; one it cannot hold fails the start. */
function clientConnections(config: Config): number {
  try {
    return connectionCap(config.client.maxConnections, openFilesLimit());
  } catch (error) {
    throw new ConfigError([(error as Error).message]);
  }
}

/**
 * The public listener. A stop tells every answer still to be written to say Connection: close
 * at once; after the drain delay the listener closes, idle keep-alive sockets close and the
 * requests under way finish; past the deadline they are cut.
 */
function createPublicListener(options: {
  config: Config;
  logger: Logger;
  lifecycle: Lifecycle;
  maxConnections: number;
  parts: { handler: RequestListener };
}): HttpServer {
  const { config, lifecycle } = options;
  const http = createHttpServer({
    handler: options.parts.handler,
    limits: { ...config.client, maxConnections: options.maxConnections },
    logger: options.logger,
  });
  lifecycle.onPreClose('listener', () => http.beginStop());
  lifecycle.onDrain(
    'listener',
    () => http.close(),
    () => http.destroyAll(),
  );
  return http;
}

/**
 * OPS_PORT: probes and scrapes on a listener of their own, outside MAX_CONNECTIONS, so they are
 * answered while the public port is flooded (contract section 1). Built like the public one
 * (problem+json for unreadable requests), with a cap and short header timeouts of its own; at
 * the cap the oldest silent connection gives way, so whatever connects to it cannot keep probes
 * out (contract section 7, "The operations port answers"). It answers probes (503, draining)
 * through the whole drain and closes once the drain is over, its connections cut: a probe
 * needs no goodbye.
 */
function createOpsListener(options: {
  config: Config;
  logger: Logger;
  lifecycle: Lifecycle;
  handler: RequestListener;
}): HttpServer {
  const ops = createHttpServer({
    handler: options.handler,
    limits: operationsLimits(options.config.client, OPS_MAX_CONNECTIONS),
    evictSilentAtCap: true,
    logger: options.logger,
  });
  options.lifecycle.onClose('operations listener', () => {
    ops.destroyAll();
    return ops.close();
  });
  return ops;
}

/** Connects what the lifecycle holds, waiting for Redis no longer than REDIS_CONNECT_WAIT_MS. */
async function connect(options: {
  config: Config;
  logger: Logger;
  lifecycle: Lifecycle;
}): Promise<void> {
  if (options.config.redis.topology.kind === 'none') {
    options.logger.warn(
      'REDIS_URL is not set: in-process cache and sessions; run a single instance only',
    );
  }
  await Promise.race([
    options.lifecycle.start(),
    sleep(REDIS_CONNECT_WAIT_MS, undefined, { ref: false }),
  ]);
}

function warnOfShortTimeout(config: Config, logger: Logger): void {
  if (config.shutdownDrainDelayMs + config.longestUpstreamDeadlineMs >= config.shutdownTimeoutMs) {
    logger.warn(
      'SHUTDOWN_TIMEOUT_MS is not above SHUTDOWN_DRAIN_DELAY_MS plus the longest upstream deadline: a stop may cut requests under way',
    );
  }
}

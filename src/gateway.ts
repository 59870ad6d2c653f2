import type { RequestListener, Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { ConfigError, type Config } from '../config/load-config.js';
import type { CachedLoader } from './cache/cached-loader.js';
import type { CacheStore } from './cache/cache-store.js';
import { createGatewayParts, type GatewayParts } from './gateway-parts.js';
import type { Readiness } from './health/readiness.js';
import { connectionCap, openFilesLimit } from './http/connection-cap.js';
import { createHttpServer, type HttpServer } from './http/http-server.js';
import { operationsLimits } from './http/ops-limits.js';
import { createLifecycle, type Lifecycle } from './lifecycle/lifecycle.js';

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
   * SHUTDOWN_TIMEOUT_MS every connection and upstream call is cut. True when clean.
   */
  stop(): Promise<boolean>;
}

/** How long start() waits for Redis before serving without it (it keeps reconnecting). */
const REDIS_CONNECT_WAIT_MS = 1000;
/** Connections the operations listener takes at once: probes and a few scrapers. */
const OPS_MAX_CONNECTIONS = 64;

export interface GatewayDependencies {
  logger: Logger;
  /**
   * The clock sessions, cache entries (fresh, stale, error windows) and in-process rate-limit
   * windows run by; tests move it instead of waiting (default Date.now).
   */
  now?: () => number;
}

export function createGateway(config: Config, dependencies: GatewayDependencies): Gateway {
  const { logger } = dependencies;
  let maxConnections: number;
  try {
    maxConnections = connectionCap(config.client.maxConnections, openFilesLimit());
  } catch (error) {
    throw new ConfigError([(error as Error).message]);
  }
  const lifecycle = createLifecycle(logger);
  const parts = createGatewayParts(
    config,
    logger,
    dependencies.now ?? Date.now,
    { maxConnections },
    lifecycle,
  );
  const http = createHttpServer({
    handler: parts.handler,
    limits: { ...config.client, maxConnections },
    logger,
  });
  let url: string | undefined;
  let opsUrl: string | undefined;
  // OPS_PORT: probes and scrapes on a listener of their own, outside MAX_CONNECTIONS, so they
  // are answered while the public port is flooded (contract section 1). Built like the public
  // one (problem+json for unreadable requests), with a cap and short header timeouts of its
  // own; at the cap the oldest silent connection gives way, so whatever connects to it cannot
  // keep probes out (contract section 7, "The operations port answers").
  const ops = parts.opsHandler
    ? createHttpServer({
        handler: parts.opsHandler,
        limits: operationsLimits(config.client, OPS_MAX_CONNECTIONS),
        evictSilentAtCap: true,
        logger,
      })
    : undefined;

  async function connect(): Promise<void> {
    if (config.redis.topology.kind === 'none') {
      logger.warn(
        'REDIS_URL is not set: in-process cache and sessions; run a single instance only',
      );
    }
    await Promise.race([
      lifecycle.start(),
      sleep(REDIS_CONNECT_WAIT_MS, undefined, { ref: false }),
    ]);
  }

  return {
    handler: parts.handler,
    readiness: parts.readiness,
    loader: parts.loader,
    cache: parts.cache,
    server: http.server,
    get url() {
      if (url === undefined) throw new Error('the gateway is not listening');
      return url;
    },
    get opsUrl() {
      return opsUrl;
    },
    async start() {
      if (
        config.shutdownDrainDelayMs + config.longestUpstreamDeadlineMs >=
        config.shutdownTimeoutMs
      ) {
        logger.warn(
          'SHUTDOWN_TIMEOUT_MS is not above SHUTDOWN_DRAIN_DELAY_MS plus the longest upstream deadline: a stop may cut requests under way',
        );
      }
      await connect();
      // A stop that began while Redis was connecting wins: nothing starts listening after it.
      if (parts.readiness.draining) return;
      url = await http.listen(config.port, config.host);
      parts.chatEvents?.start();
      if (ops && config.opsPort !== undefined)
        opsUrl = await ops.listen(config.opsPort, config.host);
      logger.info({ maxConnections }, 'client connections capped');
    },
    stop: () => stopGateway({ config, parts, http, ops, lifecycle }),
  };
}

/**
 * A stop, in its phases: readiness turns 503 and the event streams begin to end, each at its
 * own moment within the drain delay; the listener keeps accepting for the drain delay, then
 * closes once the last stream has ended; requests under way and the loader's writes
 * finish; the chat event queue is deleted while its pool and Redis are still up; then every
 * part the lifecycle holds closes. Past SHUTDOWN_TIMEOUT_MS connections and calls are cut.
 */
async function stopGateway(gateway: {
  config: Config;
  parts: GatewayParts;
  http: HttpServer;
  ops: HttpServer | undefined;
  lifecycle: Lifecycle;
}): Promise<boolean> {
  const { config, parts, http, ops } = gateway;
  parts.readiness.startDraining();
  // Event streams never end on their own: they end spread over the drain delay, none after it,
  // so the pages of this instance reconnect to the others over that window, not in one
  // instant, and none delays the drain (contract section 2.2).
  const streamsEnded = parts.events.stop(config.shutdownDrainDelayMs);
  http.beginStop();
  const hardDeadline = new Promise<false>((resolve) =>
    setTimeout(resolve, config.shutdownTimeoutMs, false).unref(),
  );
  const drained = (async () => {
    await sleep(config.shutdownDrainDelayMs);
    // Already settled: the last stream's moment falls inside the delay.
    await streamsEnded;
    await http.close();
    await parts.loader.settled();
    return true as const;
  })();
  // The event queue is deleted and its lease released while the chat pool and Redis are up.
  const eventsStopped = parts.chatEvents?.stop();
  const clean = await Promise.race([drained, hardDeadline]);
  await Promise.race([eventsStopped, hardDeadline]);
  if (!clean) http.destroyAll();
  if (ops) {
    ops.destroyAll();
    await ops.close();
  }
  await gateway.lifecycle.close({ force: !clean });
  return clean;
}

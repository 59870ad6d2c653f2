import { createServer, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Config } from '../config/load-config.js';
import type { CachedLoader } from './cache/cached-loader.js';
import type { CacheStore } from './cache/cache-store.js';
import { createGatewayParts } from './gateway-parts.js';
import type { Readiness } from './health/readiness.js';

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

export function createGateway(config: Config, dependencies: { logger: Logger }): Gateway {
  const { logger } = dependencies;
  const parts = createGatewayParts(config, logger);
  const server = createServer(parts.handler);
  // Keep-alive sockets must outlive a load balancer's idle timeout (commonly 60 s).
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  // Responses under way, so a stop can tell them to close their connection when done: a
  // keep-alive socket that is busy when the listener closes would otherwise stay open, idle,
  // until its keep-alive timeout.
  const inFlight = new Set<ServerResponse>();
  server.on('request', (_req, res: ServerResponse) => {
    inFlight.add(res);
    res.once('close', () => inFlight.delete(res));
    res.once('finish', () => {
      if (parts.readiness.draining) setImmediate(() => server.closeIdleConnections());
    });
  });
  let url: string | undefined;

  async function connect(): Promise<void> {
    if (!parts.redis) {
      logger.warn(
        'REDIS_URL is not set: in-process cache and sessions; run a single instance only',
      );
      return;
    }
    const connected = parts.redis.connect().then(
      () => undefined,
      () => undefined,
    );
    await Promise.race([connected, sleep(REDIS_CONNECT_WAIT_MS, undefined, { ref: false })]);
  }

  async function close(force: boolean): Promise<void> {
    for (const breaker of parts.breakers) breaker.shutdown();
    // Forced: upstream calls still running are destroyed rather than awaited.
    await Promise.all(parts.upstreams.map((upstream) => upstream.close({ force })));
    const redis = parts.redis;
    if (!redis) return;
    if (force) redis.disconnect();
    else await redis.quit().catch(() => redis.disconnect());
  }

  return {
    handler: parts.handler,
    readiness: parts.readiness,
    loader: parts.loader,
    cache: parts.cache,
    server,
    get url() {
      if (url === undefined) throw new Error('the gateway is not listening');
      return url;
    },
    async start() {
      await connect();
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.port, config.host, () => {
          server.off('error', reject);
          resolve();
        });
      });
      const address = server.address() as AddressInfo;
      const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      url = `http://${host}:${address.port}`;
    },
    async stop() {
      parts.readiness.startDraining();
      const hardDeadline = new Promise<false>((resolve) =>
        setTimeout(resolve, config.shutdownTimeoutMs, false).unref(),
      );
      const drained = (async () => {
        await sleep(config.shutdownDrainDelayMs);
        const closed = server.listening
          ? new Promise<void>((resolve) => server.close(() => resolve()))
          : Promise.resolve();
        for (const res of inFlight) if (!res.headersSent) res.shouldKeepAlive = false;
        server.closeIdleConnections();
        await closed;
        await parts.loader.settled();
        return true as const;
      })();
      const clean = await Promise.race([drained, hardDeadline]);
      if (!clean) server.closeAllConnections();
      await close(!clean);
      return clean;
    },
  };
}

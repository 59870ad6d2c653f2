import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Config } from '../config/load-config.js';
import { createGateway } from './create-gateway.js';
import { createGatewayResources } from './gateway-resources.js';

export interface RunningGateway {
  readonly server: Server;
  /** `http://host:port` it listens on. */
  readonly url: string;
  /** Graceful stop: drain, finish in-flight requests, close pools and Redis. True if clean. */
  stop(): Promise<boolean>;
}

/**
 * Opens the gateway's sockets (Redis, upstream pools, the listener) for a validated config.
 * Entry points (main.ts, demo.ts) call it; nothing else opens sockets.
 */
export async function runGateway(config: Config, logger: Logger): Promise<RunningGateway> {
  if (config.redis.url === undefined) {
    logger.warn('REDIS_URL is not set: in-process cache and sessions; run a single instance only');
  }
  const resources = createGatewayResources(config, logger);
  // A Redis that is down at start-up is a degraded cache, not a failed start.
  resources.connect().catch(() => undefined);
  const gateway = createGateway(resources.parts);

  const server = createServer(gateway.app);
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
      if (gateway.readiness.draining) setImmediate(() => server.closeIdleConnections());
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;

  /**
   * Graceful stop: /readyz turns 503 at once; new connections are still accepted for the drain
   * delay (load balancers need a probe or two to notice); then the listener closes, idle
   * keep-alive sockets are closed, in-flight requests finish (answered with Connection: close,
   * their sockets closed as they finish), background refreshes settle, and pools and Redis
   * close. Past SHUTDOWN_TIMEOUT_MS every connection and upstream call is cut and the result
   * is false.
   */
  async function stop(): Promise<boolean> {
    gateway.readiness.startDraining();
    const hardDeadline = new Promise<false>((resolve) =>
      setTimeout(resolve, config.shutdownTimeoutMs, false).unref(),
    );
    const drained = (async () => {
      await sleep(config.shutdownDrainDelayMs);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const res of inFlight) if (!res.headersSent) res.shouldKeepAlive = false;
      server.closeIdleConnections();
      await closed;
      await gateway.loader.settled();
      return true as const;
    })();
    const clean = await Promise.race([drained, hardDeadline]);
    if (!clean) server.closeAllConnections();
    gateway.shutdown();
    // Forced: upstream calls still running are destroyed rather than awaited.
    await resources.close({ force: !clean });
    return clean;
  }

  return { server, url, stop };
}

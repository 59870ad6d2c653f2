import { Cluster, Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../../config/load-config.js';

/** One Redis server, a Sentinel-managed master, or a Redis Cluster: the same commands. */
export type RedisConnection = Redis | Cluster;

/** Reconnects (to a server, the Sentinels or the cluster) back off to 2 s and never give up. */
const reconnectDelay = (attempt: number) => Math.min(100 * 2 ** Math.min(attempt, 5), 2000);

export interface RedisClientOptions {
  redis: Config['redis'];
  logger: Logger;
}

/**
 * A Redis client tuned to fail fast: a cache must never make a request slow. Commands issued
 * while disconnected fail at once (no offline queue), each command has a short timeout, and
 * reconnects back off up to 2 s forever so Redis is used again when it returns. It does not
 * connect until the caller says so (`connect()`), as the composition root decides when sockets
 * open. With Sentinel it asks the Sentinels for the master and follows a failover; with a
 * cluster it follows slot moves and promotions. Undefined without Redis (an in-process store).
 */
export function createRedisClient(options: RedisClientOptions): RedisConnection | undefined {
  const { redis: config, logger } = options;
  const { topology } = config;
  const common = {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    // REDIS_COMMAND_TIMEOUT_MS is each guarded call's deadline, judged after the event loop has
    // read its reply (resilience/deadline.ts, through each use's breaker). ioredis's own timer
    // fails a reply that a busy process reads late, so it is only a backstop, for the calls no
    // breaker guards (the lease, the change bus) and for a connection that stopped answering.
    commandTimeout: Math.max(1000, config.commandTimeoutMs * 10),
    connectTimeout: Math.max(500, config.commandTimeoutMs * 5),
    retryStrategy: reconnectDelay,
    // Redis 7 speaks RESP3; pinning RESP2 keeps replies identical across server versions.
    protocol: 2 as const,
    // No auto-pipelining: measured under load (npm run bench), batching the hit path's scripts
    // bought no throughput and held ~50 MB more heap in flight.
  };
  const credentials = {
    ...(config.username === undefined ? {} : { username: config.username }),
    ...(config.password === undefined ? {} : { password: config.password }),
    ...(config.tls ? { tls: {} } : {}),
  };
  let client: RedisConnection;
  switch (topology.kind) {
    case 'none':
      return undefined;
    case 'single':
      client = new Redis(topology.url, { ...common, keyPrefix: config.keyPrefix });
      break;
    case 'sentinel':
      client = new Redis({
        ...common,
        ...credentials,
        keyPrefix: config.keyPrefix,
        sentinels: topology.sentinels.map((s) => ({ host: s.host, port: s.port })),
        name: topology.master,
        role: 'master',
        ...(config.tls ? { enableTLSForSentinelMode: true } : {}),
        // A failover is found by asking the Sentinels again on the next reconnect.
        sentinelRetryStrategy: reconnectDelay,
      });
      break;
    case 'cluster':
      client = new Cluster(
        topology.nodes.map((n) => ({ host: n.host, port: n.port })),
        {
          lazyConnect: true,
          keyPrefix: config.keyPrefix,
          enableOfflineQueue: false,
          // Reads and writes go to masters: a replica may lag behind a write just made.
          scaleReads: 'master',
          clusterRetryStrategy: reconnectDelay,
          // Moved slots and a promoted replica are followed by asking the cluster again.
          retryDelayOnFailover: 100,
          retryDelayOnClusterDown: 100,
          slotsRefreshTimeout: Math.max(1000, config.commandTimeoutMs * 5),
          redisOptions: { ...common, ...credentials },
        },
      );
      break;
  }
  let lastState = '';
  const report = (state: string, error?: unknown) => {
    if (state === lastState) return;
    lastState = state;
    if (state === 'ready') logger.info({ topology: topology.kind }, 'redis connected');
    else logger.warn({ err: error }, `redis ${state}; cache degrades to misses`);
  };
  client.on('ready', () => report('ready'));
  client.on('error', (error: unknown) => report('error', error));
  client.on('end', () => report('end'));
  return client;
}

/**
 * Another connection like `redis` (same server or Sentinels or cluster, same options, key
 * prefix and scripts to define anew): a purpose of its own gets one (contract section 7).
 */
export function duplicateOf(redis: RedisConnection): RedisConnection {
  return redis instanceof Cluster ? redis.duplicate() : redis.duplicate();
}

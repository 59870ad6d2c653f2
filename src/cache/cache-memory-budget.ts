import calculateSlot from 'cluster-key-slot';
import { Cluster, type Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { RedisConnection } from '../redis/redis-client.js';

/** Without a `maxmemory` to take half of, the cache stops storing past this. */
export const DEFAULT_BUDGET_BYTES = 256 * 1024 * 1024;
/** `INFO memory` is read this often per node: never per request (contract section 1). */
export const BUDGET_READ_MS = 1000;

/**
 * CACHE_REDIS_MAX_BYTES (contract sections 1 and 7): while cache entries share a Redis with
 * sessions, counters and the lease, the cache stops storing new entries before that Redis runs
 * out of memory, so no amount of search traffic evicts a session or fails a login. Each node's
 * `used_memory` is read in the background; a store consults the last reading of its key's node
 * plus what this instance has stored there since, so a burst between two readings cannot run
 * past the budget by more than the other instances' writes of one second.
 */
export interface CacheMemoryBudget {
  /** Whether `bytes` under `key` may be stored now; counts them if so, a refusal if not. */
  allows(key: string, bytes: number): boolean;
  /** Entries and encodings not stored, by reason. */
  readonly skipped: Readonly<Record<string, number>>;
  start(): Promise<void>;
  stop(): void;
}

/** Stores everything: the cache has a Redis of its own, or lives in this process. */
export const UNBOUNDED: CacheMemoryBudget = {
  allows: () => true,
  skipped: {},
  start: () => Promise.resolve(),
  stop: () => undefined,
};

/** A node's `used_memory` and `maxmemory` from its `INFO memory` text. */
export function readMemoryInfo(text: string): { used: number; max: number } | undefined {
  const field = (name: string) => {
    const match = new RegExp(`^${name}:(\\d+)\\r?$`, 'm').exec(text);
    return match === null ? undefined : Number(match[1]);
  };
  const used = field('used_memory');
  const max = field('maxmemory');
  return used === undefined ? undefined : { used, max: max ?? 0 };
}

export function createCacheMemoryBudget(options: {
  /** A connection of the Redis the cache shares, kept for background commands. */
  redis: RedisConnection;
  /** CACHE_REDIS_MAX_BYTES, or undefined: half each node's maxmemory (or the default). */
  maxBytes: number | undefined;
  keyPrefix: string;
  logger: Logger;
}): CacheMemoryBudget {
  const { redis, logger, keyPrefix } = options;
  const cluster = redis instanceof Cluster ? redis : undefined;
  /**
   * Per node (`host:port`; '' is the one node of a single or Sentinel Redis): bytes left below
   * the budget at the last reading, less what this instance stored there since.
   */
  const room = new Map<string, number>();
  const skipped: Record<string, number> = { memory: 0 };
  let timer: NodeJS.Timeout | undefined;
  let warned = false;

  const nameOf = (node: Redis) => (cluster ? `${node.options.host}:${node.options.port}` : '');
  const budgetOf = (max: number) => options.maxBytes ?? (max > 0 ? max / 2 : DEFAULT_BUDGET_BYTES);

  async function readNode(node: Redis): Promise<void> {
    const info = readMemoryInfo(await node.info('memory'));
    if (info === undefined) throw new Error('INFO memory has no used_memory');
    room.set(nameOf(node), budgetOf(info.max) - info.used);
  }

  async function readAll(): Promise<void> {
    const nodes = cluster ? cluster.nodes('master') : [redis as Redis];
    const results = await Promise.allSettled(nodes.map(readNode));
    const refused = results.find((r) => r.status === 'rejected');
    if (refused === undefined || warned || (redis.status !== 'ready' && !cluster)) return;
    // A server that is down answers nothing; one that is up and refuses INFO never will.
    const reason: unknown = refused.reason;
    if (!/NOPERM|unknown command/i.test(String(reason))) return;
    warned = true;
    logger.warn(
      { err: reason },
      'INFO is refused by the Redis the cache shares: CACHE_REDIS_MAX_BYTES is not enforced',
    );
  }

  /** The node that holds `key`'s slot, as the cluster's last slot table says. */
  function nodeOf(key: string): string {
    if (!cluster) return '';
    const owners = (cluster as Cluster & { slots: string[][] }).slots[
      calculateSlot(`${keyPrefix}${key}`)
    ];
    return owners?.[0] ?? '';
  }

  return {
    allows(key, bytes) {
      const node = nodeOf(key);
      // Not read yet (Redis away, INFO refused): nothing is known to hold the cache back.
      const left = room.get(node);
      if (left === undefined) return true;
      if (left >= bytes) {
        room.set(node, left - bytes);
        return true;
      }
      skipped['memory']! += 1;
      return false;
    },
    skipped,
    start() {
      // Everything starts together: the first reading is taken once the connection is up (and
      // again after each reconnect, a failover's included), not at a moment it may not be.
      redis.on('ready', () => void readAll().catch(() => undefined));
      timer ??= setInterval(() => void readAll().catch(() => undefined), BUDGET_READ_MS);
      timer.unref();
      return redis.status === 'ready' ? readAll().catch(() => undefined) : Promise.resolve();
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
    },
  };
}

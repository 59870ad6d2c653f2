import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { afterAll, beforeAll, inject } from 'vitest';
import {
  createBreaker,
  type Breaker,
  type BreakerOptions,
} from '../../src/resilience/circuit-breaker.js';

/**
 * A real Redis: the private redis-server the suite's global setup started (or TEST_REDIS_URL).
 * Each test gateway gets its own key prefix so parallel runs never collide; nothing here mocks
 * Redis, and nothing skips when it is missing: a test that needs Redis fails loudly without it.
 */
export const TEST_REDIS_URL = inject('redisUrl');

export function uniquePrefix(): string {
  return `bff-test:${randomUUID()}:`;
}

/** A plain client (no prefix) for a test to inspect or corrupt what the gateway stored. */
export function createInspector(): Redis {
  return new Redis(TEST_REDIS_URL, { lazyConnect: false, maxRetriesPerRequest: 1 });
}

/** Deletes every key under a prefix. */
export async function deletePrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
}

export async function keysUnder(redis: Redis, prefix: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    cursor = next;
    found.push(...keys);
  } while (cursor !== '0');
  return found;
}

/**
 * A test file's own key prefix on the test Redis: a client whose commands go under it (`redis`,
 * with `options`), an inspector under the same prefix, and every key under it deleted after
 * the file's tests. The clients exist from the file's beforeAll on.
 */
export function usePrefixedRedis(options: { protocol?: 2 | 3; lazyConnect?: boolean } = {}): {
  readonly prefix: string;
  readonly redis: Redis;
  readonly inspector: Redis;
} {
  const prefix = uniquePrefix();
  let redis: Redis | undefined;
  let inspector: Redis | undefined;
  beforeAll(() => {
    redis = new Redis(TEST_REDIS_URL, { keyPrefix: prefix, ...options });
    inspector = new Redis(TEST_REDIS_URL, { keyPrefix: prefix });
  });
  afterAll(async () => {
    const cleaner = createInspector();
    await deletePrefix(cleaner, prefix);
    cleaner.disconnect();
    redis?.disconnect();
    inspector?.disconnect();
  });
  const started = (client: Redis | undefined) => {
    if (client === undefined) throw new Error('usePrefixedRedis: clients exist from beforeAll on');
    return client;
  };
  return {
    prefix,
    get redis() {
      return started(redis);
    },
    get inspector() {
      return started(inspector);
    },
  };
}

/** The breaker the Redis-backed parts run their commands through in a test: opens quickly. */
export function testRedisBreaker(
  logger: Logger,
  extra: Partial<Pick<BreakerOptions, 'deadlineMs'>> = {},
): Breaker {
  return createBreaker({
    name: 'redis-test',
    thresholds: { failurePercent: 50, minRequests: 3, windowSeconds: 5, openSeconds: 1 },
    logger,
    isFailure: () => true,
    openError: () => new Error('open'),
    ...extra,
  });
}

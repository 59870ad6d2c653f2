import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { inject } from 'vitest';

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

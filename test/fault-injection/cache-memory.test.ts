import { Redis } from 'ioredis';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { readMemoryInfo } from '../../src/cache/cache-memory-budget.js';
import { startRedisServer, type RedisServer } from '../harness/chaos-processes.js';
import { eventually } from '../helpers/eventually.js';
import { keysUnder } from '../helpers/test-redis.js';
import type { TestGateway } from '../helpers/test-gateway.js';
import { useUpstreams } from '../helpers/upstreams.js';

/*
 * Contract section 7, "The cache cannot crowd out state": no amount or size of search traffic
 * evicts a session or a rate-limit counter, or makes a login fail for want of memory. A real
 * redis-server with a small maxmemory under each eviction policy an operator might set, and a
 * flood of distinct searches (each a ~20 KB entry, plus its compressed bodies) several times
 * larger than that memory.
 */

const upstreams = useUpstreams();
const servers: RedisServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

const MAXMEMORY = 4 * 1024 * 1024;
/** Distinct searches per flood: ~300 × 20 KB, and their compressed bodies, is twice the Redis. */
const FLOOD = 300;
/** Searches in flight at once. */
const PARALLEL = 16;

async function redisWith(policy: string): Promise<{ server: RedisServer; client: Redis }> {
  const server = await startRedisServer([
    '--maxmemory',
    String(MAXMEMORY),
    '--maxmemory-policy',
    policy,
  ]);
  servers.push(server);
  const client = new Redis(server.port, '127.0.0.1', { lazyConnect: false });
  return { server, client };
}

/** FLOOD distinct searches, PARALLEL at a time; every one must be answered 200. */
async function flood(gw: TestGateway, tag: string): Promise<void> {
  let next = 0;
  const statuses: number[] = [];
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      while (next < FLOOD) {
        const i = next++;
        const res = await request(gw.app).get(`/api/search?q=${tag}+${i}+lamp&k=10`);
        statuses.push(res.status);
      }
    }),
  );
  expect(statuses.filter((s) => s !== 200)).toEqual([]);
  await gw.loader.settled();
}

const ENV = {
  RATE_LIMIT_PER_CLIENT: '1000000',
  // Each in-process request comes from one loopback address: it is the session limit that
  // must survive here, not the per-address one.
  RATE_LIMIT_PER_SESSION: '1000000',
};

const session = (gw: TestGateway, cookie: string) =>
  request(gw.app).get('/api/auth/session').set('Cookie', cookie);

describe('a flood of distinct searches against a Redis that also holds sessions', () => {
  it.each([
    'noeviction',
    'allkeys-lru',
    'allkeys-lfu',
    'allkeys-random',
    'volatile-lru',
    'volatile-lfu',
    'volatile-random',
    'volatile-ttl',
  ])(
    'when the Redis runs %s with a small maxmemory, then every live session stays valid, a new login works and nothing is evicted',
    async (policy) => {
      const { server, client } = await redisWith(policy);
      try {
        const gw = await upstreams.gateway({ cache: { redisUrl: server.url }, env: ENV });
        const cookies = [
          await upstreams.login(gw, 'owner'),
          await upstreams.login(gw, 'member'),
          await upstreams.login(gw, 'guest'),
        ];
        await flood(gw, policy);
        for (const cookie of cookies) expect((await session(gw, cookie)).status).toBe(200);
        expect(await upstreams.login(gw, 'moderator')).toMatch(/=/);
        const info = await client.info();
        // The cache stopped storing at half the memory (CACHE_REDIS_MAX_BYTES' default)…
        expect(readMemoryInfo(info)!.used).toBeLessThan(MAXMEMORY);
        expect(/^evicted_keys:(\d+)/m.exec(info)![1]).toBe('0');
        // …and said so: entries were skipped, not lost silently.
        const metrics = (await request(gw.app).get('/metrics').expect(200)).text;
        expect(metrics).toMatch(/^gateway_cache_store_skipped_total\{reason="memory"\} [1-9]/m);
        // Answers are still served (misses are misses, not errors) and some were cached.
        expect(await keysUnder(client, `${gw.prefix}search:`)).not.toEqual([]);
      } finally {
        client.disconnect();
      }
    },
    120_000,
  );

  it('when the cache has a Redis of its own (REDIS_CACHE_URL), then the state Redis holds no cache entry and the cache Redis evicts only entries', async () => {
    const state = await redisWith('noeviction');
    const cache = await redisWith('allkeys-lru');
    try {
      const gw = await upstreams.gateway({
        cache: { redisUrl: state.server.url },
        env: { ...ENV, REDIS_CACHE_URL: cache.server.url },
      });
      const cookie = await upstreams.login(gw, 'member');
      await flood(gw, 'apart');
      expect((await session(gw, cookie)).status).toBe(200);
      const stateKeys = await keysUnder(state.client, gw.prefix);
      expect(stateKeys.filter((k) => /(search|channel-folders|flight)/.test(k))).toEqual([]);
      expect(stateKeys.some((k) => k.includes('session:'))).toBe(true);
      // The cache Redis filled up and made room the way it is told to: by evicting entries.
      const cacheKeys = await keysUnder(cache.client, gw.prefix);
      expect(cacheKeys.length).toBeGreaterThan(0);
      expect(cacheKeys.every((k) => /search:|flight/.test(k))).toBe(true);
      await eventually(
        async () => Number(/^evicted_keys:(\d+)/m.exec(await cache.client.info('stats'))![1]) > 0,
        { what: 'the cache Redis to evict entries' },
      );
      // A hit is a hit: one answer came from the cache Redis.
      await request(gw.app).get('/api/search?q=apart+again&k=3').expect(200);
      await gw.loader.settled();
      const again = await request(gw.app).get('/api/search?q=apart+again&k=3').expect(200);
      expect(again.headers['x-cache']).toBe('HIT');
    } finally {
      state.client.disconnect();
      cache.client.disconnect();
    }
  }, 120_000);
});

import { Redis } from 'ioredis';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../harness/chaos-processes.js';
import { startHoldProxy, type HoldProxy } from '../harness/hold-proxy.js';
import { createTestGateway, type TestGateway } from '../helpers/test-gateway.js';
import { useUpstreams } from '../helpers/upstreams.js';

/**
 * What a search miss costs Redis (issue 18): counted, so a regression fails a test rather than
 * hiding in a benchmark. A private redis-server (nothing else's commands in its statistics),
 * reached through a proxy that records every command the gateway sends.
 */
const upstreams = useUpstreams();

let server: RedisServer;
let proxy: HoldProxy;
let stats: Redis;
beforeAll(async () => {
  server = await startRedisServer();
  proxy = await startHoldProxy({ host: '127.0.0.1', port: server.port });
  stats = new Redis(server.port, '127.0.0.1');
});
afterAll(async () => {
  stats.disconnect();
  await proxy.close();
  await server.stop();
});

/** Commands run by the server, scripts' own commands included, by name. */
async function commandStats(): Promise<Record<string, number>> {
  const info = await stats.info('commandstats');
  const counts: Record<string, number> = {};
  for (const [, name, calls] of info.matchAll(/^cmdstat_([\w|]+):calls=(\d+)/gm)) {
    counts[name!] = Number(calls);
  }
  return counts;
}

function difference(after: Record<string, number>, before: Record<string, number>) {
  const changed: Record<string, number> = {};
  for (const [name, calls] of Object.entries(after)) {
    const delta = calls - (before[name] ?? 0);
    if (delta > 0 && name !== 'info') changed[name] = delta;
  }
  return changed;
}

/**
 * Every RESP command the gateway sent: `*<n>` array heads at the start of a command. The cache
 * memory budget's `INFO memory`, read once a second in the background, is no miss's cost.
 */
const COMMANDS = /(?:^|\r\n)\*\d+\r\n\$\d+\r\n(?!\r\n)(?!info\r\n)/gi;

async function gateway(env: Record<string, string> = {}): Promise<TestGateway> {
  return createTestGateway({
    searchOrigin: upstreams.search.origin,
    chatOrigin: upstreams.chat.origin,
    cache: { redisUrl: `redis://${proxy.host}:${proxy.port}` },
    env,
  });
}

describe('a search miss, counted in Redis commands', () => {
  it('when misses meet no other instance, then each costs two round trips and at most ten commands, and nobody is told', async () => {
    const gw = await gateway();
    try {
      // Warm: scripts loaded (a first EVALSHA may fall back to EVAL), the window counter made.
      await request(gw.app).get('/api/search?q=warm&k=3').expect(200);
      await gw.loader.settled();
      const before = await commandStats();
      const sentBefore = proxy.count(COMMANDS);
      const misses = 20;
      for (let i = 0; i < misses; i += 1) {
        const res = await request(gw.app).get(`/api/search?q=miss-${i}&k=3`).expect(200);
        expect(res.headers['x-cache']).toBe('MISS');
      }
      await gw.loader.settled();
      const ran = difference(await commandStats(), before);
      const roundTrips = proxy.count(COMMANDS) - sentBefore;
      expect(roundTrips / misses).toBe(2);
      const total = Object.values(ran).reduce((a, b) => a + b, 0);
      expect(total / misses).toBeLessThanOrEqual(10);
      // No broadcast of a miss: nobody waited, so nothing is published.
      expect(ran['publish']).toBeUndefined();
      expect(ran['subscribe']).toBeUndefined();
      expect(upstreams.search.requests.filter((r) => r.pathname === '/v1/search')).toHaveLength(
        misses + 1,
      );
    } finally {
      await gw.close();
    }
  });

  it('when a miss claimed its key lock but was refused by a limit, then the lock is given back once the answer is done', async () => {
    const gw = await gateway({ RATE_LIMIT_PER_CLIENT: '1' });
    try {
      await request(gw.app).get('/api/search?q=first&k=3').expect(200);
      const refused = await request(gw.app).get('/api/search?q=second&k=3');
      expect(refused.status).toBe(429);
      await eventuallyNoLocks(gw.prefix);
      expect(upstreams.search.requests.filter((r) => r.pathname === '/v1/search')).toHaveLength(1);
    } finally {
      await gw.close();
    }
  });
});

async function eventuallyNoLocks(prefix: string): Promise<void> {
  for (let i = 0; i < 200; i += 1) {
    if ((await stats.keys(`${prefix}flight:*`)).length === 0) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`a flight lock is still held: ${(await stats.keys(`${prefix}flight:*`)).join()}`);
}

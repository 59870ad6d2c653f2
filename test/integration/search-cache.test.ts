import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createSearchSimulator,
  type SearchSimulator,
} from '../../simulators/search/search-simulator.js';
import { SEARCH_TOKEN, createTestGateway, type TestGateway } from '../helpers/test-gateway.js';
import { keysUnder } from '../helpers/test-redis.js';

let sim: SearchSimulator;
const gateways: TestGateway[] = [];

beforeAll(async () => {
  sim = createSearchSimulator({ clientToken: SEARCH_TOKEN });
  await sim.listen();
});
afterAll(() => sim.close());
beforeEach(() => {
  sim.requests.length = 0;
  sim.faults.clear();
});
afterEach(async () => {
  await Promise.all(gateways.splice(0).map((g) => g.close()));
});

async function gateway(
  env: Record<string, string> = {},
  cache: 'redis' | 'memory' | { redisUrl: string } = 'redis',
) {
  const gw = await createTestGateway({ searchOrigin: sim.origin, cache, env });
  gateways.push(gw);
  return gw;
}

const searches = () => sim.requests.filter((r) => r.pathname === '/v1/search').length;

describe.each(['redis', 'memory'] as const)('search cache (%s)', (backend) => {
  it('when the same search repeats within the TTL, then the second is a HIT without an upstream call', async () => {
    const gw = await gateway({}, backend);
    const first = await request(gw.app).get('/api/search?q=coffee&k=4&sort=price_asc');
    const second = await request(gw.app).get('/api/search?q=coffee&k=4&sort=price_asc');
    expect(first.headers['x-cache']).toBe('MISS');
    expect(second.headers['x-cache']).toBe('HIT');
    expect(second.text).toBe(first.text);
    expect(searches()).toBe(1);
  });

  it('when an entry is past its TTL but inside the stale window, then it is served STALE with one background refresh', async () => {
    const gw = await gateway(
      { SEARCH_CACHE_TTL_SECONDS: '0', SEARCH_CACHE_STALE_SECONDS: '60' },
      backend,
    );
    await request(gw.app).get('/api/search?q=laptop').expect(200);
    await gw.loader.settled(); // the entry is written after the answer
    const stale = await Promise.all(
      Array.from({ length: 5 }, () => request(gw.app).get('/api/search?q=laptop')),
    );
    for (const res of stale) expect(res.headers['x-cache']).toBe('STALE');
    await gw.loader.settled();
    expect(searches()).toBe(2); // the first miss and exactly one refresh
  });

  it('when the upstream fails and an entry is inside its error window, then the stale entry is served instead of the error', async () => {
    const gw = await gateway(
      {
        SEARCH_CACHE_TTL_SECONDS: '0',
        SEARCH_CACHE_STALE_SECONDS: '0',
        SEARCH_CACHE_STALE_IF_ERROR_SECONDS: '60',
      },
      backend,
    );
    const fresh = await request(gw.app).get('/api/search?q=laptop').expect(200);
    await gw.loader.settled(); // the entry is written after the answer
    sim.faults.add({ fault: { kind: 'status', status: 503 } });
    const res = await request(gw.app).get('/api/search?q=laptop');
    expect(res.status).toBe(200);
    expect(res.headers['x-cache']).toBe('STALE');
    expect(res.text).toBe(fresh.text);
    expect(gw.logs.text()).toContain('serving a stale entry');
  });

  it('when the upstream fails and there is no entry, then the error is returned', async () => {
    const gw = await gateway({}, backend);
    sim.faults.add({ fault: { kind: 'status', status: 500 } });
    await request(gw.app).get('/api/search?q=laptop').expect(502);
  });

  it('when 40 cold requests for one key arrive together, then the upstream is called once', async () => {
    const gw = await gateway({}, backend);
    sim.faults.add({ fault: { kind: 'delay', ms: 100 } });
    const responses = await Promise.all(
      Array.from({ length: 40 }, () =>
        request(gw.app).get('/api/search?q=wireless+headphones&k=10'),
      ),
    );
    expect(responses.every((r) => r.status === 200)).toBe(true);
    expect(new Set(responses.map((r) => r.text)).size).toBe(1);
    expect(searches()).toBe(1);
  });
});

describe('search cache in Redis', () => {
  it('when a search is cached, then Redis holds one versioned key under the gateway prefix with a TTL', async () => {
    const gw = await gateway();
    await request(gw.app).get('/api/search?q=coffee&k=4').expect(200);
    const keys = await keysUnder(gw.inspector!, `${gw.prefix}search:`);
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(
      new RegExp(`^${gw.prefix}search:v3:json:relevance:upstream:\\{[\\w-]{43}\\}$`),
    );
    const ttl = await gw.inspector!.pttl(keys[0]!);
    expect(ttl).toBeGreaterThan(0);
    // TTL 60 s spread by the default ±10 % jitter, then the 3600 s stale-if-error window.
    expect(ttl).toBeGreaterThan((54 + 3600) * 1000 - 5000);
    expect(ttl).toBeLessThanOrEqual((66 + 3600) * 1000);
  });

  it("when two gateway instances share Redis, then the second serves the first one's entry", async () => {
    const a = await gateway();
    const b = await createTestGateway({
      searchOrigin: sim.origin,
      cache: 'redis',
      env: { REDIS_KEY_PREFIX: a.prefix },
    });
    gateways.push(b);
    await request(a.app).get('/api/search?q=shoes').expect(200);
    const res = await request(b.app).get('/api/search?q=shoes');
    expect(res.headers['x-cache']).toBe('HIT');
    expect(searches()).toBe(1);
  });

  it('when the stored entry is corrupt, then it is a miss with a warning and the request succeeds', async () => {
    const gw = await gateway();
    await request(gw.app).get('/api/search?q=coffee').expect(200);
    const [key] = await keysUnder(gw.inspector!, `${gw.prefix}search:`);
    await gw.inspector!.set(key!, '{"v":2,"half":');
    const res = await request(gw.app).get('/api/search?q=coffee');
    expect(res.status).toBe(200);
    expect(res.headers['x-cache']).toBe('MISS');
    expect(searches()).toBe(2);
    expect(
      gw.logs
        .lines()
        .some((l) => l['level'] === 40 && String(l['msg']).includes('corrupt cache entry')),
    ).toBe(true);
  });

  it('when Redis is down, then searches still succeed as misses and readiness says degraded', async () => {
    const gw = await gateway({}, { redisUrl: 'redis://127.0.0.1:9/0' });
    const first = await request(gw.app).get('/api/search?q=coffee');
    const second = await request(gw.app).get('/api/search?q=coffee');
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.headers['x-cache']).toBe('MISS');
    expect(gw.logs.text()).toMatch(/cache read failed|cache miss/);
    const ready = await request(gw.app).get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({
      status: 'degraded',
      checks: { cache: { status: 'degraded' } },
    });
  });

  describe('when Redis accepts connections but never answers', () => {
    let blackHole: Server;
    let port: number;
    const sockets = new Set<Socket>();
    beforeAll(async () => {
      blackHole = createServer((socket) => {
        sockets.add(socket);
      });
      await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
      port = (blackHole.address() as AddressInfo).port;
    });
    afterAll(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => blackHole.close(() => resolve()));
    });

    it('then each search still succeeds after the command timeout', async () => {
      const gw = await gateway(
        { REDIS_COMMAND_TIMEOUT_MS: '50' },
        { redisUrl: `redis://127.0.0.1:${port}/0` },
      );
      const res = await request(gw.app).get('/api/search?q=coffee');
      expect(res.status).toBe(200);
      expect(res.headers['x-cache']).toBe('MISS');
      expect(gw.logs.text()).toMatch(/cache read failed|cache miss/);
    });
  });
});

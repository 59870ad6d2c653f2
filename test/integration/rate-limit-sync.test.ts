import { Redis } from 'ioredis';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { startRedisServer } from '../harness/chaos-processes.js';
import { eventually } from '../helpers/eventually.js';
import { BROWSER_HEADERS, type TestGateway } from '../helpers/test-gateway.js';
import { createInspector, keysUnder } from '../helpers/test-redis.js';
import { useUpstreams } from '../helpers/upstreams.js';

/*
 * RATE_LIMIT_SYNC_MS above 0 (contract section 1): the general limit is counted in each
 * instance and added to the shared Redis at most that often, so a fleet may overshoot by
 * instances × rate × interval; the login limit stays exact. Two real instances on one real
 * Redis; the client is 127.0.0.1 for both.
 */

const upstreams = useUpstreams({ cache: 'redis' });

const gateway = (env: Record<string, string>, prefix?: string) =>
  upstreams.gateway({ env: { ...env, ...(prefix ? { REDIS_KEY_PREFIX: prefix } : {}) } });

const search = async (gw: TestGateway, n: number) => {
  const statuses: number[] = [];
  for (let i = 0; i < n; i += 1) {
    statuses.push((await request(gw.app).get(`/api/search?q=sync${i}`)).status);
  }
  return statuses;
};

/** Outlives the gateways: the second instance shares the first's prefix, not its inspector. */
const inspector = createInspector();
afterAll(() => inspector.disconnect());

/** The client's general counter in Redis under the deployment's prefix. */
const counterOf = (prefix: string) => `${prefix}ratelimit:client:127.0.0.1`;
/** The fleet's count of it (0 when there is no counter). */
const fleetCount = async (prefix: string) => Number((await inspector.get(counterOf(prefix))) ?? 0);

describe('the general limit counted locally (RATE_LIMIT_SYNC_MS)', () => {
  it('when two instances take requests between two syncs, then each admits the limit on its own (the bounded overshoot), and a stop sends every count', async () => {
    // Longer than the test: nothing syncs but the stops.
    const env = { RATE_LIMIT_PER_CLIENT: '5', RATE_LIMIT_SYNC_MS: '60000' };
    const a = await gateway(env);
    const b = await gateway(env, a.prefix);
    expect(await search(a, 7)).toEqual([200, 200, 200, 200, 200, 429, 429]);
    expect(await search(b, 7)).toEqual([200, 200, 200, 200, 200, 429, 429]);
    // Counted in process: no request wrote a counter.
    expect(await keysUnder(a.inspector!, `${a.prefix}ratelimit:`)).toEqual([]);
    // The gateways' own stop: the harness's close would also delete the deployment's keys.
    await a.gateway.stop();
    expect(await fleetCount(a.prefix)).toBe(7);
    await b.gateway.stop();
    expect(await fleetCount(a.prefix)).toBe(14);
    const ttl = await inspector.pttl(counterOf(a.prefix));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('when requests arrive at the same time, then one instance admits exactly the limit counting locally, and two instances together exactly the limit counting in Redis', async () => {
    const at = (gw: TestGateway, n: number, tag: string) =>
      Promise.all(
        Array.from({ length: n }, (_, i) =>
          request(gw.app)
            .get(`/api/search?q=${tag}${i}`)
            .then((r) => r.status),
        ),
      );
    const admitted = (statuses: number[]) => statuses.filter((s) => s === 200).length;
    const local = await gateway({ RATE_LIMIT_PER_CLIENT: '5', RATE_LIMIT_SYNC_MS: '60000' });
    const once = await at(local, 12, 'together');
    expect(admitted(once)).toBe(5);
    expect(once.filter((s) => s !== 200).every((s) => s === 429)).toBe(true);
    const a = await gateway({ RATE_LIMIT_PER_CLIENT: '5' });
    const b = await gateway({ RATE_LIMIT_PER_CLIENT: '5' }, a.prefix);
    const both = (await Promise.all([at(a, 6, 'exact-a'), at(b, 6, 'exact-b')])).flat();
    expect(admitted(both)).toBe(5);
  });

  it("when an instance syncs, then it learns the others' counts and refuses past the limit", async () => {
    const env = { RATE_LIMIT_PER_CLIENT: '5', RATE_LIMIT_SYNC_MS: '100' };
    const a = await gateway(env);
    const b = await gateway(env, a.prefix);
    expect(await search(a, 3)).toEqual([200, 200, 200]);
    await eventually(async () => (await fleetCount(a.prefix)) === 3, {
      what: "a's counts in Redis",
    });
    // b has not heard of a's three until its own count comes back from Redis with them.
    expect(await search(b, 1)).toEqual([200]);
    await eventually(async () => (await fleetCount(a.prefix)) === 4, {
      what: "b's count in Redis",
    });
    const next = await request(b.app).get('/api/search?q=sync-next');
    expect(next.status).toBe(200);
    expect(next.headers['ratelimit']).toMatch(/^"client";r=0;t=\d+$/);
    expect(await search(b, 1)).toEqual([429]);
  });

  it('when logins are tried on two instances, then the login limit is still counted exactly in Redis', async () => {
    const env = { LOGIN_RATE_LIMIT_PER_CLIENT: '2', RATE_LIMIT_SYNC_MS: '60000' };
    const a = await gateway(env);
    const b = await gateway(env, a.prefix);
    const attempt = (gw: TestGateway) =>
      request(gw.app)
        .post('/api/auth/login')
        .set(BROWSER_HEADERS)
        .send({ email: 'marie@acme.test', password: 'wrong' });
    expect((await attempt(a)).status).toBe(401);
    expect((await attempt(b)).status).toBe(401);
    expect((await attempt(a)).status).toBe(429);
    expect((await attempt(b)).status).toBe(429);
  });

  it('when requests carry a session cookie, then the session limit is still counted exactly in Redis, and a forged cookie creates no counter anywhere', async () => {
    const gw = await upstreams.sessionGateway({
      RATE_LIMIT_PER_SESSION: '2',
      RATE_LIMIT_SYNC_MS: '60000',
    });
    const cookie = { Cookie: await upstreams.login(gw, 'member') };
    const statuses = [];
    for (let i = 0; i < 3; i += 1) {
      statuses.push((await request(gw.app).get(`/api/search?q=s${i}`).set(cookie)).status);
    }
    expect(statuses).toEqual([200, 200, 429]);
    expect(await keysUnder(inspector, `${gw.prefix}ratelimit:session:`)).toHaveLength(1);
    const forged = { Cookie: `bff_session=${'a'.repeat(43)}` };
    for (let i = 0; i < 3; i += 1) {
      expect((await request(gw.app).get('/api/search?q=forged').set(forged)).status).toBe(200);
    }
    expect(await keysUnder(inspector, `${gw.prefix}ratelimit:session:`)).toHaveLength(1);
  });

  it('when Redis is away for a while, then each instance limits on its own and the counts made meanwhile reach Redis once it is back', async () => {
    const redis = await startRedisServer();
    const inspector = new Redis(redis.url, { maxRetriesPerRequest: 1, lazyConnect: true });
    try {
      const gw = await upstreams.gateway({
        cache: { redisUrl: redis.url },
        env: { RATE_LIMIT_PER_CLIENT: '4', RATE_LIMIT_SYNC_MS: '100' },
      });
      await redis.kill();
      expect(await search(gw, 5)).toEqual([200, 200, 200, 200, 429]);
      await redis.restart();
      await eventually(
        async () => Number(await inspector.get(`${gw.prefix}ratelimit:client:127.0.0.1`)) === 5,
        { what: 'the counts made while Redis was away, in Redis', timeoutMs: 15_000 },
      );
    } finally {
      inspector.disconnect();
      await redis.stop();
    }
  });
});

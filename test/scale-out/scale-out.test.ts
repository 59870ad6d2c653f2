import { randomUUID } from 'node:crypto';
import zlib, { brotliDecompressSync, gunzipSync } from 'node:zlib';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  redisCli,
  startRedisCluster,
  startRedisSentinel,
  type RedisCluster,
  type RedisNode,
  type RedisSentinelSetup,
} from '../harness/redis-topologies.js';
import { eventually } from '../helpers/eventually.js';
import { rawRequest } from '../helpers/raw-request.js';
import type { TestGateway } from '../helpers/test-gateway.js';
import { BROWSER_HEADERS } from '../helpers/test-gateway.js';
import { useUpstreams } from '../helpers/upstreams.js';

/*
 * Contract section 4 with many instances (issue: scale-out): two gateways on one real Redis
 * Cluster (six redis-server processes) and on a real Sentinel setup, sharing cache entries,
 * sessions and rate limits, making one upstream call per key between them, and answering
 * through a master's death.
 */

const upstreams = useUpstreams();

/** Search calls the simulator received for a query. */
const searchCalls = (q: string) =>
  upstreams.search.requests.filter(
    (r) => r.pathname === '/v1/search' && new URL(`http://x${r.url}`).searchParams.get('q') === q,
  ).length;

/** Two instances of one deployment: the same Redis, prefix and secrets. */
async function pair(redisEnv: Record<string, string>, extra: Record<string, string> = {}) {
  const env = {
    ...redisEnv,
    REDIS_KEY_PREFIX: `scale:${randomUUID()}:`,
    // Three servers share two cores here: 100 ms would make scheduler noise a Redis failure.
    REDIS_COMMAND_TIMEOUT_MS: '500',
    SESSION_COOKIE_SECURE: 'false',
    ...extra,
  };
  const a = await upstreams.gateway({ env });
  const b = await upstreams.gateway({ env });
  return { a, b, prefix: env.REDIS_KEY_PREFIX };
}

const search = (gw: TestGateway, q: string) => request(gw.app).get(`/api/search?q=${q}&k=3`);

/** The behaviours every shared topology must have, run against each. */
function sharedStateCases(redisEnv: () => Record<string, string>) {
  it('when one instance caches an answer, then the other serves it as a hit', async () => {
    const { a, b } = await pair(redisEnv());
    const first = await search(a, 'desk+lamp');
    expect(first.status).toBe(200);
    expect(first.headers['x-cache']).toBe('MISS');
    // The write is off the answer's path: the other instance asks once it has landed.
    await a.loader.settled();
    const second = await search(b, 'desk+lamp');
    expect(second.headers['x-cache']).toBe('HIT');
    expect(second.text).toBe(first.text);
    expect(searchCalls('desk lamp')).toBe(1);
  });

  it('when one instance has answered in br and gzip, then the other sends those stored bytes, compressing nothing', async () => {
    const { a, b } = await pair(redisEnv());
    const path = '/api/search?q=desk+mat&k=3';
    const identity = await rawRequest(a.app, {
      path,
      headers: { 'Accept-Encoding': 'identity' },
    });
    expect(identity.headers['x-cache']).toBe('MISS');
    await a.loader.settled();
    // Each coding is made by the first answer in it, here both on instance a, and kept with
    // the entry off the answer's path.
    for (const coding of ['br', 'gzip']) {
      const made = await rawRequest(a.app, { path, headers: { 'Accept-Encoding': coding } });
      expect(made.headers['x-cache']).toBe('HIT');
      expect(made.headers['content-encoding']).toBe(coding);
    }
    await a.loader.settled();
    const brotli = vi.spyOn(zlib, 'brotliCompressSync');
    const gzip = vi.spyOn(zlib, 'gzipSync');
    try {
      const hit = await rawRequest(b.app, { path, headers: { 'Accept-Encoding': 'gzip, br' } });
      expect(hit.headers['x-cache']).toBe('HIT');
      expect(hit.headers['content-encoding']).toBe('br');
      expect(hit.headers['etag']).toBe(`${(identity.headers['etag'] as string).slice(0, -1)}-br"`);
      expect(brotliDecompressSync(hit.bytes).equals(identity.bytes)).toBe(true);
      const gzipHit = await rawRequest(b.app, { path, headers: { 'Accept-Encoding': 'gzip' } });
      expect(gunzipSync(gzipHit.bytes).equals(identity.bytes)).toBe(true);
      expect(brotli).not.toHaveBeenCalled();
      expect(gzip).not.toHaveBeenCalled();
    } finally {
      brotli.mockRestore();
      gzip.mockRestore();
    }
    expect(searchCalls('desk mat')).toBe(1);
  });

  it('when 40 concurrent requests for a new key arrive at both instances, then the search service gets one call', async () => {
    const { a, b } = await pair(redisEnv());
    upstreams.search.faults.add({
      fault: { kind: 'delay', ms: 400 },
      pathPrefix: '/v1/search',
      times: 1,
    });
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => search(i % 2 === 0 ? a : b, 'espresso+grinder')),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(40).fill(200));
    expect(new Set(answers.map((r) => r.text)).size).toBe(1);
    expect(searchCalls('espresso grinder')).toBe(1);
    const collapsed = answers.filter((r) =>
      String(r.headers['cache-status']).includes('collapsed'),
    );
    expect(collapsed.length).toBeGreaterThan(0);
  });

  it('when a user logs in on one instance, then the other knows the session, and logging out ends it on both', async () => {
    const { a, b } = await pair(redisEnv());
    const cookie = await upstreams.login(a, 'member');
    const onB = await request(b.app).get('/api/auth/session').set('Cookie', cookie);
    expect(onB.status).toBe(200);
    await request(b.app).post('/api/auth/logout').set(BROWSER_HEADERS).set('Cookie', cookie);
    const after = await request(a.app).get('/api/auth/session').set('Cookie', cookie);
    expect(after.status).toBe(401);
  });

  it('when the per-client limit is counted locally (RATE_LIMIT_SYNC_MS), then the counts both instances send land on the counter an exact instance reads', async () => {
    const { a, b, prefix } = await pair(redisEnv(), {
      RATE_LIMIT_PER_CLIENT: '6',
      RATE_LIMIT_SYNC_MS: '60000',
    });
    for (const gw of [a, b]) {
      for (let i = 0; i < 3; i += 1) expect((await search(gw, `sync${i}`)).status).toBe(200);
    }
    // Their stops send what they counted; nothing synced before.
    await Promise.all([a.gateway.stop(), b.gateway.stop()]);
    const exact = await upstreams.gateway({
      env: {
        ...redisEnv(),
        REDIS_KEY_PREFIX: prefix,
        REDIS_COMMAND_TIMEOUT_MS: '500',
        RATE_LIMIT_PER_CLIENT: '6',
      },
    });
    const refused = await search(exact, 'sync-exact');
    expect(refused.status).toBe(429);
    expect(refused.headers['ratelimit']).toMatch(/^"client";r=0;t=\d+$/);
  });

  it('when a client spreads its requests over both instances, then they count against one limit', async () => {
    const { a, b } = await pair(redisEnv(), { RATE_LIMIT_PER_CLIENT: '6' });
    const statuses: number[] = [];
    for (let i = 0; i < 8; i += 1) {
      statuses.push((await search(i % 2 === 0 ? a : b, 'kettle')).status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429, 429]);
  });
}

/** Requests from both instances in a loop until `stop` resolves; every answer recorded. */
async function underLoad(gws: TestGateway[], q: string, stop: Promise<unknown>) {
  const statuses: number[] = [];
  const caches: string[] = [];
  const bodies: string[] = [];
  let done = false;
  void stop.finally(() => (done = true));
  await Promise.all(
    gws.flatMap((gw) =>
      Array.from({ length: 4 }, async () => {
        while (!done) {
          const res = await search(gw, q);
          statuses.push(res.status);
          caches.push(String(res.headers['x-cache']));
          if (res.status !== 200) bodies.push(res.text);
        }
      }),
    ),
  );
  return { statuses, caches, bodies };
}

/** Asks until an answer is a hit; an answer other than a 200 on the way fails at once. */
async function waitForHit(gw: TestGateway, q: string) {
  const res = await eventually(
    async () => {
      const answer = await search(gw, q);
      return answer.status !== 200 || answer.headers['x-cache'] === 'HIT' ? answer : false;
    },
    { what: 'hits to resume after the failover', timeoutMs: 15_000 },
  );
  expect(res.status).toBe(200);
}

describe('two instances on a Redis Cluster', () => {
  let cluster: RedisCluster;
  beforeAll(async () => {
    cluster = await startRedisCluster();
  }, 60_000);
  afterAll(() => cluster?.stop());

  sharedStateCases(() => ({ REDIS_CLUSTER_NODES: cluster.seeds }));

  it('when the master holding a hot key is killed under load, then no answer fails and hits resume after the failover', async () => {
    const { a, b, prefix } = await pair(
      { REDIS_CLUSTER_NODES: cluster.seeds },
      { RATE_LIMIT_PER_CLIENT: '1000000' },
    );
    await search(a, 'bluetooth+speaker');
    await waitForHit(b, 'bluetooth+speaker');
    const keys = (
      await Promise.all(
        cluster.nodes
          .filter((n) => n.running)
          .map((n) => redisCli(n.port, 'keys', `${prefix}search:*`)),
      )
    )
      .join('\n')
      .split('\n')
      .filter((k) => k !== '');
    // A master and its replica both hold it.
    expect(new Set(keys).size).toBe(1);
    const master: RedisNode = await cluster.masterOf(keys[0]!);

    const failover = (async () => {
      await master.kill();
      await cluster.failedOver(master);
    })();
    const load = await underLoad([a, b], 'bluetooth+speaker', failover);
    await failover;
    expect(load.statuses.length).toBeGreaterThan(20);
    expect(load.statuses.filter((s) => s !== 200)).toEqual([]);
    await waitForHit(a, 'bluetooth+speaker');
    await waitForHit(b, 'bluetooth+speaker');
  }, 60_000);
});

describe('two instances on Redis Sentinel', () => {
  let setup: RedisSentinelSetup;
  beforeAll(async () => {
    setup = await startRedisSentinel();
  }, 30_000);
  afterAll(() => setup?.stop());

  const sentinelEnv = () => ({
    REDIS_SENTINELS: setup.sentinels,
    REDIS_SENTINEL_MASTER: setup.masterName,
  });

  sharedStateCases(sentinelEnv);

  it('when the master dies under load, then cached reads never fail, sessions are never logged out, and hits resume on the new master', async () => {
    const { a, b } = await pair(sentinelEnv(), {
      RATE_LIMIT_PER_CLIENT: '1000000',
      RATE_LIMIT_PER_SESSION: '1000000',
    });
    const cookie = await upstreams.login(a, 'member');
    await search(a, 'yoga+mat');
    await waitForHit(b, 'yoga+mat');
    const master = await setup.master();

    const sessionStatuses: number[] = [];
    const failover = (async () => {
      await master.kill();
      await setup.failedOver(master);
    })();
    const sessions = (async () => {
      let done = false;
      void failover.finally(() => (done = true));
      while (!done) {
        const res = await request(b.app).get('/api/auth/session').set('Cookie', cookie);
        sessionStatuses.push(res.status);
        if (res.status === 503) expect(res.headers['retry-after']).toBeDefined();
      }
    })();
    const load = await underLoad([a, b], 'yoga+mat', failover);
    await Promise.all([failover, sessions]);
    expect(
      load.statuses.filter((s) => s !== 200),
      load.bodies.join('\n').slice(0, 2000),
    ).toEqual([]);
    // 503 while no master answers is allowed; a false logout (401) never is.
    expect(sessionStatuses.filter((s) => s !== 200 && s !== 503)).toEqual([]);
    await waitForHit(a, 'yoga+mat');
    await waitForHit(b, 'yoga+mat');
    // The session was written before the failover; the replica had it, so it survived.
    const res = await eventually(
      async () => {
        const answer = await request(a.app).get('/api/auth/session').set('Cookie', cookie);
        // 503 while no master answers; anything else ends the wait.
        return answer.status === 503 ? false : answer;
      },
      { what: 'the session to come back after the failover', timeoutMs: 15_000 },
    );
    expect(res.status).toBe(200);
  }, 60_000);
});

describe('Sentinel-managed nodes that require a password', () => {
  const PASSWORD = 'canary-redis-password-4d2f';
  let setup: RedisSentinelSetup;
  beforeAll(async () => {
    setup = await startRedisSentinel({ password: PASSWORD });
  }, 30_000);
  afterAll(() => setup?.stop());

  const env = (password: string) => ({
    REDIS_SENTINELS: setup.sentinels,
    REDIS_SENTINEL_MASTER: setup.masterName,
    REDIS_PASSWORD: password,
  });

  it('when REDIS_PASSWORD is right, then the instances share the cache, and the password is in no log line', async () => {
    const { a, b } = await pair(env(PASSWORD));
    expect((await search(a, 'hiking+boots')).headers['x-cache']).toBe('MISS');
    await waitForHit(b, 'hiking+boots');
    for (const gw of [a, b]) expect(JSON.stringify(gw.logs.lines())).not.toContain(PASSWORD);
  });

  it('when REDIS_PASSWORD is wrong, then every answer still comes (from the search service) and readiness says degraded', async () => {
    const { a } = await pair(env('not-the-password'));
    for (let i = 0; i < 2; i += 1) {
      const res = await search(a, 'rain+jacket');
      expect(res.status).toBe(200);
      expect(res.headers['x-cache']).toBe('MISS');
    }
    expect(searchCalls('rain jacket')).toBe(2);
    const ready = await request(a.app).get('/readyz');
    expect(ready.status).toBe(200);
    expect((ready.body as { status: string }).status).toBe('degraded');
    expect(JSON.stringify(a.logs.lines())).not.toContain('not-the-password');
  });
});

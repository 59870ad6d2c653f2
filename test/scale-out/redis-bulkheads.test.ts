import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisSentinel, type RedisSentinelSetup } from '../harness/redis-topologies.js';
import { eventually } from '../helpers/eventually.js';
import { createTestClock } from '../helpers/test-clock.js';
import { BROWSER_HEADERS, type TestGateway } from '../helpers/test-gateway.js';
import { useUpstreams } from '../helpers/upstreams.js';

/*
 * Contract section 7, Replicas: whatever a replica does while the master answers, logins and
 * session refreshes succeed, and no other Redis command waits for it. A real Sentinel set
 * (master, replica, Sentinel); the replica is stopped with SIGSTOP, so its sockets stay open
 * and it answers nothing, as a stalled replica does.
 */

const upstreams = useUpstreams();
let setup: RedisSentinelSetup;
beforeAll(async () => {
  setup = await startRedisSentinel();
}, 60_000);
afterAll(async () => {
  await setup?.stop();
});

const sentinelEnv = () => ({
  REDIS_SENTINELS: setup.sentinels,
  REDIS_SENTINEL_MASTER: setup.masterName,
});

/** One sample of a metric from the gateway's own /metrics, 0 when absent. */
async function metric(gw: TestGateway, line: RegExp): Promise<number> {
  const text = (await request(gw.app).get('/metrics').expect(200)).text;
  const match = text.split('\n').find((l) => line.test(l));
  return match === undefined ? 0 : Number(match.split(' ').at(-1));
}

const members = ['owner', 'administrator', 'moderator', 'member', 'guest'] as const;

async function login(gw: TestGateway, kind: (typeof members)[number]) {
  const creds = upstreams.chat.credentials(kind);
  const res = await request(gw.app)
    .post('/api/auth/login')
    .set(BROWSER_HEADERS)
    .send({ email: creds.email, password: creds.password });
  const setCookie = (res.headers['set-cookie'] as unknown as string[] | undefined)?.[0];
  return { status: res.status, cookie: setCookie?.split(';')[0] };
}

describe('a stalled replica (Sentinel)', () => {
  it('when the replica is stopped, then logins and refreshes answer 200, hits stay hits, the unreplicated counter rises and no Redis breaker opens', async () => {
    const clock = createTestClock();
    // A wait longer than a command's deadline: it must be bounded on its own, never judged by
    // the command timeout (a write confirmed late is a success, not a Redis that failed).
    const gw = await upstreams.gateway({
      env: {
        ...sentinelEnv(),
        REDIS_COMMAND_TIMEOUT_MS: '1000',
        REDIS_REPLICA_WAIT_MS: '1200',
        // Attempts count while they are under way: twelve at once are not a guesser.
        LOGIN_RATE_LIMIT_PER_CLIENT: '100',
      },
      now: clock.now,
    });
    const hit = () => request(gw.app).get('/api/search?q=lamp&k=3');
    expect((await hit()).headers['x-cache']).toBe('MISS');
    await gw.loader.settled();
    expect((await hit()).headers['x-cache']).toBe('HIT');
    const healthy = await login(gw, 'owner');
    expect(healthy.status).toBe(200);
    expect(await metric(gw, /^gateway_session_writes_unreplicated_total /)).toBe(0);

    const replica = await setup.replica();
    replica.pause();
    try {
      // Logins and hits at the same time: each login's write waits for the stopped replica.
      const logins = Array.from({ length: 12 }, (_, i) => login(gw, members[i % members.length]!));
      const hits = Array.from({ length: 40 }, () => hit());
      const [loggedIn, answered] = await Promise.all([Promise.all(logins), Promise.all(hits)]);
      expect(loggedIn.map((l) => l.status)).toEqual(loggedIn.map(() => 200));
      expect(answered.map((r) => r.headers['x-cache'])).toEqual(answered.map(() => 'HIT'));
      // A refresh: the idle expiry slides once a minute of it has passed.
      clock.advance(120_000);
      await request(gw.app).get('/api/auth/session').set('Cookie', healthy.cookie!).expect(200);
      const unreplicated = await metric(gw, /^gateway_session_writes_unreplicated_total /);
      expect(unreplicated).toBeGreaterThanOrEqual(12);
      // The refresh is written off the request's path; it is counted once it stands.
      await eventually(
        async () =>
          (await metric(gw, /^gateway_session_writes_unreplicated_total /)) >= unreplicated + 1,
        { what: 'the refresh to be written, unconfirmed' },
      );
      const breakers = (await request(gw.app).get('/metrics').expect(200)).text
        .split('\n')
        .filter((l) => l.startsWith('gateway_circuit_breaker_state{breaker="redis-'));
      expect(breakers.length).toBeGreaterThan(0);
      expect(breakers.filter((l) => !l.endsWith(' 0'))).toEqual([]);
      // Every session made while the replica was stopped works.
      for (const { cookie } of loggedIn) {
        await request(gw.app).get('/api/auth/session').set('Cookie', cookie!).expect(200);
      }
    } finally {
      replica.resume();
    }
  }, 60_000);

  it('when the replica is healthy, then a login it confirmed survives a failover', async () => {
    const gw = await upstreams.gateway({ env: sentinelEnv() });
    const { status, cookie } = await login(gw, 'member');
    expect(status).toBe(200);
    expect(await metric(gw, /^gateway_session_writes_unreplicated_total /)).toBe(0);
    const master = await setup.master();
    await master.kill();
    await setup.failedOver(master);
    // Session routes may answer 503 until the gateway follows the promotion; never 401.
    await eventually(
      async () => {
        const res = await request(gw.app).get('/api/auth/session').set('Cookie', cookie!);
        expect(res.status).not.toBe(401);
        return res.status === 200;
      },
      { what: 'the session to be read from the promoted replica', timeoutMs: 30_000 },
    );
  }, 90_000);
});

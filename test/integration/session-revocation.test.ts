import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../harness/chaos-processes.js';
import { eventually } from '../helpers/eventually.js';
import { BROWSER_HEADERS, type TestGateway } from '../helpers/test-gateway.js';
import {
  TEST_REDIS_URL,
  createInspector,
  deletePrefix,
  uniquePrefix,
} from '../helpers/test-redis.js';
import { useUpstreams } from '../helpers/upstreams.js';

/*
 * Contract section 7, Logout is final across a failover, on one Redis: a session ended on one
 * instance stays ended on every instance even when its record comes back, as it does on a
 * promoted replica that never saw the DEL, or on a master restarted from a snapshot taken
 * before it. Instances that heard of the end reject it from memory; the instance whose Redis
 * came back as another process writes the DEL again, so one started afterwards finds nothing.
 * (test/scale-out/session-failover.test.ts does the same through a real Sentinel and Cluster
 * failover.)
 */

const upstreams = useUpstreams();
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const SESSION_ENV = { CHAT_AUTH_MODE: 'session', SESSION_COOKIE_SECURE: 'false' };

async function login(gw: TestGateway): Promise<string> {
  const { email, password } = upstreams.chat.credentials('member');
  const res = await request(gw.app)
    .post('/api/auth/login')
    .set(BROWSER_HEADERS)
    .send({ email, password });
  expect(res.status, res.text).toBe(200);
  return (res.headers['set-cookie'] as unknown as string[])[0]!.split(';')[0]!;
}

async function logout(gw: TestGateway, cookie: string): Promise<void> {
  const res = await request(gw.app)
    .post('/api/auth/logout')
    .set(BROWSER_HEADERS)
    .set('Cookie', cookie);
  expect(res.status).toBe(204);
}

const sessionStatus = async (gw: TestGateway, cookie: string) =>
  (await request(gw.app).get('/api/auth/session').set('Cookie', cookie)).status;

/** An instance of one deployment on `redisUrl`: the prefix and the secrets shared. */
const instance = (redisUrl: string, prefix: string) =>
  upstreams.gateway({ cache: { redisUrl }, env: { ...SESSION_ENV, REDIS_KEY_PREFIX: prefix } });

/** A plain client (no prefix), closed after the test. */
function client(url: string): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  cleanups.push(() => redis.disconnect());
  return redis;
}

describe('an ended session stays ended', () => {
  it('when a logged-out session’s record comes back in Redis, then every running instance still rejects it', async () => {
    const prefix = uniquePrefix();
    cleanups.push(async () => {
      const inspector = createInspector();
      await deletePrefix(inspector, prefix);
      inspector.disconnect();
    });
    const a = await instance(TEST_REDIS_URL, prefix);
    const b = await instance(TEST_REDIS_URL, prefix);
    const cookie = await login(a);
    const redis = client(TEST_REDIS_URL);
    const [key] = await redis.keys(`${prefix}session:v1:*`);
    const record = (await redis.get(key!))!;
    await logout(a, cookie);
    expect(await redis.exists(key!)).toBe(0);
    await redis.set(key!, record, 'PX', 600_000);
    // The instance that logged it out remembers; the other heard it over the bus.
    expect(await sessionStatus(a, cookie)).toBe(401);
    await eventually(async () => (await sessionStatus(b, cookie)) === 401, {
      what: 'the other instance to learn of the logout',
    });
    expect((await request(a.app).get('/metrics')).text).toMatch(
      /^gateway_sessions_ended_total\{reason="logout"\} 1$/m,
    );
  });

  it('when Redis comes back from a snapshot taken before a logout, then the instances write the DEL again and one started afterwards rejects the cookie', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bff-revocation-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const server: RedisServer = await startRedisServer(['--dir', dir]);
    cleanups.push(() => server.stop());
    const prefix = uniquePrefix();
    const a = await instance(server.url, prefix);
    const b = await instance(server.url, prefix);
    const cookie = await login(a);
    const before = client(server.url);
    const [key] = await before.keys(`${prefix}session:v1:*`);
    await before.call('SAVE'); // the snapshot holds the live session
    await logout(a, cookie);
    await eventually(async () => (await sessionStatus(b, cookie)) === 401, {
      what: 'the other instance to see the logout',
    });

    await server.restart(); // another process, from the snapshot: the record is back
    const after = client(server.url);
    await eventually(async () => (await after.exists(key!)) === 0, {
      what: 'the record to be deleted again',
    });
    expect(await sessionStatus(a, cookie)).toBe(401);
    expect(await sessionStatus(b, cookie)).toBe(401);
    const c = await instance(server.url, prefix);
    expect(await sessionStatus(c, cookie)).toBe(401);
  });
});

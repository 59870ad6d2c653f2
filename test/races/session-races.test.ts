import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { startHoldProxy, type HoldProxy } from '../harness/hold-proxy.js';
import { BROWSER_HEADERS, createTestGateway, type TestGateway } from '../helpers/test-gateway.js';
import { TEST_REDIS_URL, createInspector, keysUnder, uniquePrefix } from '../helpers/test-redis.js';
import { useUpstreams } from '../helpers/upstreams.js';

/**
 * Contract section 6, Limits: a session that was logged out, rotated or expired never comes
 * back. The idle refresh reads a session, then writes a newer copy; these tests put the logout
 * (or the rotation) exactly between that read and that write. Instance A reaches Redis through
 * a proxy that holds Redis's reply to the session read; instance B, on the same Redis, ends the
 * session meanwhile; then A gets its reply and writes.
 */
const upstreams = useUpstreams();

const IDLE_SECONDS = 600;
/** Past the refresh slack (a tenth of the idle timeout, at most a minute): A writes back. */
const LATER_MS = 61_000;
/** RESP of a GET, and of a SET, of a session record (ioredis sends command names lower-case). */
const SESSION_READ = /\$3\r\nget\r\n\$\d+\r\n[^\r]*session:v1:/i;
const SESSION_WRITE = /\$3\r\nset\r\n\$\d+\r\n[^\r]*session:v1:/i;

let proxy: HoldProxy | undefined;
const gateways: TestGateway[] = [];
afterEach(async () => {
  await Promise.all(gateways.splice(0).map((gw) => gw.close()));
  await proxy?.close();
  proxy = undefined;
});

/** A (through the proxy, its clock `later` ahead) and B (direct), one fleet on one Redis. */
async function twoInstances() {
  const redis = new URL(TEST_REDIS_URL);
  proxy = await startHoldProxy({ host: redis.hostname, port: Number(redis.port) });
  const prefix = uniquePrefix();
  let offset = 0;
  const env = {
    SESSION_COOKIE_SECURE: 'false',
    SESSION_IDLE_TIMEOUT_SECONDS: String(IDLE_SECONDS),
    REDIS_KEY_PREFIX: prefix,
    // A's replies are held on purpose: its commands must outlast the hold.
    REDIS_COMMAND_TIMEOUT_MS: '10000',
  };
  const common = { searchOrigin: upstreams.search.origin, chatOrigin: upstreams.chat.origin };
  const a = await createTestGateway({
    ...common,
    cache: { redisUrl: `redis://${proxy.host}:${proxy.port}` },
    env,
    now: () => Date.now() + offset,
  });
  const b = await createTestGateway({ ...common, cache: 'redis', env });
  gateways.push(a, b);
  return { a, b, prefix, later: () => (offset = LATER_MS) };
}

async function login(gw: TestGateway, cookie?: string): Promise<string> {
  const { email, password } = upstreams.chat.credentials('member');
  const req = request(gw.app).post('/api/auth/login').set(BROWSER_HEADERS);
  if (cookie) req.set('Cookie', cookie);
  const res = await req.send({ email, password });
  expect(res.status, res.text).toBe(200);
  return (res.headers['set-cookie'] as unknown as string[])[0]!.split(';')[0]!;
}

const session = (gw: TestGateway, cookie: string) =>
  request(gw.app).get('/api/auth/session').set('Cookie', cookie);

/**
 * Starts A's session read with Redis's reply held, runs `between` once the read has been sent,
 * then lets the reply through and waits until A's refresh write has reached Redis (A's next
 * request on the same connection is ordered after it).
 */
async function refreshAround(a: TestGateway, cookie: string, between: () => Promise<void>) {
  const held = proxy!;
  const writesBefore = held.count(SESSION_WRITE);
  held.holdWhen(SESSION_READ);
  const inFlight = session(a, cookie).then((res) => res);
  await held.until(() => held.holding);
  await between();
  held.release();
  // The read came before the end, so this one request may still see the session.
  expect((await inFlight).status).toBe(200);
  await held.until(() => held.count(SESSION_WRITE) > writesBefore);
}

describe('a session that ended stays ended', () => {
  it('when the other instance logs out between the idle refresh read and its write, then the old cookie is 401 everywhere and no key is left', async () => {
    const { a, b, prefix, later } = await twoInstances();
    const cookie = await login(b);
    later();
    await refreshAround(a, cookie, async () => {
      const out = await request(b.app)
        .post('/api/auth/logout')
        .set(BROWSER_HEADERS)
        .set('Cookie', cookie);
      expect(out.status).toBe(204);
    });
    expect((await session(a, cookie)).status).toBe(401);
    expect((await session(b, cookie)).status).toBe(401);
    const inspector = createInspector();
    try {
      expect(await keysUnder(inspector, `${prefix}session:`)).toEqual([]);
    } finally {
      inspector.disconnect();
    }
  });

  it('when a login on the other instance rotates the session between the refresh read and its write, then the old cookie is 401 and the new one works', async () => {
    const { a, b, later } = await twoInstances();
    const old = await login(b);
    later();
    let rotated = '';
    await refreshAround(a, old, async () => {
      rotated = await login(b, old);
    });
    expect(rotated).not.toBe(old);
    expect((await session(a, old)).status).toBe(401);
    expect((await session(b, old)).status).toBe(401);
    expect((await session(b, rotated)).status).toBe(200);
  });

  it('when the same instance logs out while its refresh is in flight, then the old cookie is 401 afterwards', async () => {
    const { a, later } = await twoInstances();
    const cookie = await login(a);
    later();
    const held = proxy!;
    held.holdWhen(SESSION_READ);
    const inFlight = session(a, cookie).then((res) => res);
    await held.until(() => held.holding);
    const out = request(a.app).post('/api/auth/logout').set(BROWSER_HEADERS).set('Cookie', cookie);
    const logout = out.then((res) => res);
    held.release();
    expect((await logout).status).toBe(204);
    await inFlight;
    expect((await session(a, cookie)).status).toBe(401);
  });
});

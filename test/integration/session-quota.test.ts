import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import type { CredentialKind } from '../../simulators/chat/chat-simulator.js';
import { openEventStream, type EventStreamClient } from '../helpers/event-stream-client.js';
import { BROWSER_HEADERS, type TestGateway } from '../helpers/test-gateway.js';
import { createInspector, deletePrefix, uniquePrefix } from '../helpers/test-redis.js';
import { useUpstreams } from '../helpers/upstreams.js';

/*
 * Contract section 7, Quotas per caller, and section 1, SESSION_MAX_PER_USER: one chat user
 * holds at most that many live sessions, fleet-wide, in both session stores; a login past it
 * ends that user's oldest as a logout would (cookie, streams), never another user's, never a
 * 503 for anyone.
 */

const upstreams = useUpstreams();
const streams: EventStreamClient[] = [];
const prefixes: string[] = [];
afterEach(async () => {
  for (const stream of streams.splice(0)) stream.close();
  const inspector = createInspector();
  try {
    for (const prefix of prefixes.splice(0)) await deletePrefix(inspector, prefix);
  } finally {
    inspector.disconnect();
  }
});

/** Session mode, the rate limits out of the way of 50 logins in a row or 24 at once. */
const SESSION_ENV = {
  CHAT_AUTH_MODE: 'session',
  SESSION_COOKIE_SECURE: 'false',
  RATE_LIMIT_PER_CLIENT: '100000',
  LOGIN_RATE_LIMIT_PER_CLIENT: '1000',
};

async function login(gw: TestGateway, kind: CredentialKind = 'member'): Promise<string> {
  const { email, password } = upstreams.chat.credentials(kind);
  const res = await request(gw.app)
    .post('/api/auth/login')
    .set(BROWSER_HEADERS)
    .send({ email, password });
  expect(res.status, res.text).toBe(200);
  return (res.headers['set-cookie'] as unknown as string[])[0]!.split(';')[0]!;
}

const sessionStatus = async (gw: TestGateway, cookie: string) =>
  (await request(gw.app).get('/api/auth/session').set('Cookie', cookie)).status;

const metrics = async (gw: TestGateway) => (await request(gw.app).get('/metrics')).text;

/** Two instances of one deployment on the test Redis: one key prefix, the same secrets. */
async function pair(env: Record<string, string> = {}) {
  const prefix = uniquePrefix();
  prefixes.push(prefix);
  const shared = { ...SESSION_ENV, REDIS_KEY_PREFIX: prefix, ...env };
  const a = await upstreams.gateway({ cache: 'redis', env: shared });
  const b = await upstreams.gateway({ cache: 'redis', env: shared });
  return { a, b, prefix };
}

describe('SESSION_MAX_PER_USER without Redis', () => {
  it('when a user logs in a 4th time with a limit of 3, then the 1st cookie is 401, the others and other users work', async () => {
    const gw = await upstreams.gateway({ env: { ...SESSION_ENV, SESSION_MAX_PER_USER: '3' } });
    const admin = await login(gw, 'administrator');
    const cookies: string[] = [];
    for (let i = 0; i < 4; i += 1) cookies.push(await login(gw));
    expect(await sessionStatus(gw, cookies[0]!)).toBe(401);
    for (const cookie of cookies.slice(1)) expect(await sessionStatus(gw, cookie)).toBe(200);
    expect(await sessionStatus(gw, admin)).toBe(200);
    expect(await metrics(gw)).toMatch(/^gateway_sessions_ended_total\{reason="user_limit"\} 1$/m);
  });

  it("when one account logs in 50 times with SESSION_MEMORY_MAX 20, then each login works and another user's login is 200, not 503", async () => {
    const gw = await upstreams.gateway({ env: { ...SESSION_ENV, SESSION_MEMORY_MAX: '20' } });
    for (let i = 0; i < 50; i += 1) await login(gw);
    const other = await login(gw, 'administrator');
    expect(await sessionStatus(gw, other)).toBe(200);
  });

  it('when a login ends the oldest session, then its event stream ends', async () => {
    const gw = await upstreams.gateway({ env: { ...SESSION_ENV, SESSION_MAX_PER_USER: '2' } });
    const oldest = await login(gw);
    const events = await openEventStream(`${gw.gateway.url}/api/events`, { Cookie: oldest });
    streams.push(events);
    expect(events.status).toBe(200);
    await events.next((e) => e.event === 'channel_folders');
    await login(gw);
    await login(gw);
    await events.ended;
    expect(await metrics(gw)).toMatch(
      /^gateway_event_streams_closed_total\{reason="session"\} 1$/m,
    );
  });
});

describe('SESSION_MAX_PER_USER on a fleet sharing Redis', () => {
  it('when a user logs in a 4th time on another instance with a limit of 3, then the 1st cookie is 401 on both and the others work on both', async () => {
    const { a, b } = await pair({ SESSION_MAX_PER_USER: '3' });
    const admin = await login(a, 'administrator');
    const cookies = [await login(a), await login(b), await login(a)];
    const stream = await openEventStream(`${a.gateway.url}/api/events`, { Cookie: cookies[0]! });
    streams.push(stream);
    await stream.next((e) => e.event === 'channel_folders');
    cookies.push(await login(b));
    for (const gw of [a, b]) {
      expect(await sessionStatus(gw, cookies[0]!)).toBe(401);
      for (const cookie of cookies.slice(1)) expect(await sessionStatus(gw, cookie)).toBe(200);
      expect(await sessionStatus(gw, admin)).toBe(200);
    }
    // The stream on the other instance ends too, as a logout's would.
    await stream.ended;
    expect(await metrics(b)).toMatch(/^gateway_sessions_ended_total\{reason="user_limit"\} 1$/m);
  });

  it('when 24 logins of one user race on two instances, then exactly the limit of them stay live', async () => {
    const { a, b, prefix } = await pair({ SESSION_MAX_PER_USER: '3' });
    const admin = await login(b, 'administrator');
    const cookies = await Promise.all(
      Array.from({ length: 24 }, (_, i) => login(i % 2 === 0 ? a : b)),
    );
    const statuses = await Promise.all(cookies.map((cookie) => sessionStatus(a, cookie)));
    expect(statuses.filter((s) => s !== 200 && s !== 401)).toEqual([]);
    expect(statuses.filter((s) => s === 200)).toHaveLength(3);
    expect(await sessionStatus(a, admin)).toBe(200);
    // Every ended session's record is gone from Redis, not only refused.
    const inspector = createInspector();
    try {
      const records = await inspector.keys(`${prefix}session:v1:*`);
      expect(records).toHaveLength(4); // the member's three and the administrator's one
    } finally {
      inspector.disconnect();
    }
  });
});

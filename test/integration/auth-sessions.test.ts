import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { CredentialKind } from '../../simulators/chat/chat-simulator.js';
import { BROWSER_HEADERS, type TestGateway } from '../helpers/test-gateway.js';
import { useUpstreams } from '../helpers/upstreams.js';
import { keysUnder } from '../helpers/test-redis.js';

const upstreams = useUpstreams({ cache: 'redis' });

type Kind = CredentialKind;

function sessionGateway(env: Record<string, string> = {}, cache?: { redisUrl: string }) {
  return upstreams.gateway({ env, ...(cache ? { cache } : {}) });
}

/** Logs in as a seeded user; returns the `name=value` cookie to send back. */
async function login(gw: TestGateway, kind: Kind, via: 'password' | 'api_key' = 'password') {
  const creds = upstreams.chat.credentials(kind);
  const body =
    via === 'password'
      ? { email: creds.email, password: creds.password }
      : { email: creds.email, api_key: creds.apiKey };
  const res = await request(gw.app).post('/api/auth/login').set(BROWSER_HEADERS).send(body);
  expect(res.status).toBe(200);
  const setCookie = (res.headers['set-cookie'] as unknown as string[])[0]!;
  return { res, setCookie, cookie: setCookie.split(';')[0]! };
}

describe('login', () => {
  it('when a user logs in with email and password, then the browser gets only an opaque HttpOnly, Secure, SameSite cookie', async () => {
    const gw = await sessionGateway();
    const { res, setCookie } = await login(gw, 'member');
    expect(setCookie).toMatch(
      /^__Host-bff_session=[A-Za-z0-9_-]{43}; Max-Age=43200; Path=\/; Expires=[^;]+; HttpOnly; Secure; SameSite=Strict$/,
    );
    expect(res.body).toMatchObject({ user: { user_id: 4, email: 'marie@acme.test', role: 400 } });
    expect(res.text).not.toContain(upstreams.chat.credentials('member').apiKey);
    const fetchKey = upstreams.chat.requests.find((r) => r.pathname === '/api/v1/fetch_api_key')!;
    expect(Object.fromEntries(new URLSearchParams(fetchKey.body))).toEqual({
      username: 'marie@acme.test',
      password: upstreams.chat.credentials('member').password,
    });
    expect(fetchKey.headers.authorization).toBeUndefined();
  });

  it('when a user logs in with an API key, then it is checked with /users/me', async () => {
    const gw = await sessionGateway();
    const { res } = await login(gw, 'administrator', 'api_key');
    expect(res.body).toMatchObject({ user: { user_id: 2 } });
    expect(upstreams.chat.requests.map((r) => r.pathname)).toEqual(['/api/v1/users/me']);
  });

  it.each([
    ['a wrong password', { password: 'wrong' }],
    ['a wrong API key', { api_key: 'x'.repeat(32) }],
  ])('when %s is given, then it is 401 and no cookie is set', async (_name, secret) => {
    const gw = await sessionGateway();
    const res = await request(gw.app)
      .post('/api/auth/login')
      .set(BROWSER_HEADERS)
      .send({ email: 'marie@acme.test', ...secret });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'UNAUTHORIZED', source: 'chat' });
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(res.headers['www-authenticate']).toBeUndefined();
  });

  it.each([
    ['neither secret', { email: 'marie@acme.test' }, 'give exactly one of password or api_key'],
    [
      'both secrets',
      { email: 'marie@acme.test', password: 'p', api_key: 'k' },
      'give exactly one of password or api_key',
    ],
    [
      'an unknown field',
      { email: 'marie@acme.test', password: 'p', remember: true },
      'unknown field "remember"',
    ],
    ['a bad email', { email: 'marie', password: 'p' }, 'email must be one address'],
  ])('when the body has %s, then it is 400 with no upstream call', async (_name, body, message) => {
    const gw = await sessionGateway();
    const res = await request(gw.app).post('/api/auth/login').set(BROWSER_HEADERS).send(body);
    expect(res.status).toBe(400);
    expect((res.body as { detail: string }).detail).toContain(message);
    expect(upstreams.chat.requests).toHaveLength(0);
  });

  it('when the session store is Redis, then it holds neither the session id nor the API key', async () => {
    const gw = await sessionGateway();
    const { cookie } = await login(gw, 'member');
    const id = cookie.split('=')[1]!;
    const keys = await keysUnder(gw.inspector!, `${gw.prefix}session:`);
    expect(keys).toHaveLength(1);
    expect(keys[0]).not.toContain(id);
    const value = (await gw.inspector!.get(keys[0]!))!;
    expect(value).not.toContain(id);
    expect(value).not.toContain(upstreams.chat.credentials('member').apiKey);
    expect(await gw.inspector!.pttl(keys[0]!)).toBeLessThanOrEqual(1800 * 1000);
  });

  it('when the session record in Redis is corrupt, then the caller is not logged in (401), the record is reported, and nothing is a 500', async () => {
    const gw = await sessionGateway();
    const { cookie } = await login(gw, 'member');
    const keys = await keysUnder(gw.inspector!, `${gw.prefix}session:`);
    expect(keys).toHaveLength(1);
    for (const garbage of ['not json', '{"user":"someone"}']) {
      await gw.inspector!.set(keys[0]!, garbage, 'KEEPTTL');
      const res = await request(gw.app).get('/api/auth/session').set('Cookie', cookie);
      expect(res.status).toBe(401);
    }
    const reported = gw.logs.lines().filter((l) => l['msg'] === 'corrupt session record ignored');
    expect(reported).toHaveLength(2);
  });

  it('when a browser that already has a session logs in again, then the id is rotated and the old one is dead', async () => {
    const gw = await sessionGateway();
    const first = await login(gw, 'member');
    const again = await request(gw.app)
      .post('/api/auth/login')
      .set(BROWSER_HEADERS)
      .set('Cookie', first.cookie)
      .send({
        email: 'grace@acme.test',
        password: upstreams.chat.credentials('administrator').password,
      });
    const second = (again.headers['set-cookie'] as unknown as string[])[0]!.split(';')[0]!;
    expect(second).not.toBe(first.cookie);
    await request(gw.app).get('/api/auth/session').set('Cookie', first.cookie).expect(401);
    const now = await request(gw.app).get('/api/auth/session').set('Cookie', second);
    expect(now.body).toMatchObject({ user: { user_id: 2 } });
  });
});

describe('session', () => {
  it('when the browser asks who is logged in, then it gets the user and the expiries; without a cookie it is 401', async () => {
    const gw = await sessionGateway();
    const { cookie } = await login(gw, 'guest');
    const res = await request(gw.app).get('/api/auth/session').set('Cookie', cookie);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      user: { user_id: 5, role: 600 },
      expires_at: expect.any(String) as string,
      idle_expires_at: expect.any(String) as string,
    });
    const anonymous = await request(gw.app).get('/api/auth/session');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it("when a member updates another user's status, then the chat server refuses with the member's own rights: 403", async () => {
    const gw = await sessionGateway();
    const { cookie } = await login(gw, 'member');
    upstreams.chat.requests.length = 0;
    const res = await request(gw.app)
      .post('/api/chat/users/2/status')
      .set(BROWSER_HEADERS)
      .set('Cookie', cookie)
      .send({ status_text: 'x' });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ detail: 'Insufficient permission', source: 'chat' });
    const { email, apiKey } = upstreams.chat.credentials('member');
    expect(upstreams.chat.requests[0]!.headers.authorization).toBe(
      `Basic ${Buffer.from(`${email}:${apiKey}`).toString('base64')}`,
    );
  });

  it('when an administrator session updates a status, then it is 204', async () => {
    const gw = await sessionGateway();
    const { cookie } = await login(gw, 'administrator');
    await request(gw.app)
      .post('/api/chat/users/4/status')
      .set(BROWSER_HEADERS)
      .set('Cookie', cookie)
      .send({ status_text: 'x' })
      .expect(204);
  });

  it('when two users read drafts and channel folders, then drafts are their own and folders come from one shared entry', async () => {
    const gw = await sessionGateway();
    const owner = await login(gw, 'owner');
    const guest = await login(gw, 'guest');
    const ownerDrafts = await request(gw.app).get('/api/chat/drafts').set('Cookie', owner.cookie);
    const guestDrafts = await request(gw.app).get('/api/chat/drafts').set('Cookie', guest.cookie);
    expect((ownerDrafts.body as { count: number }).count).toBeGreaterThan(0);
    expect(guestDrafts.body).toEqual({ count: 0, drafts: [] });
    const a = await request(gw.app).get('/api/chat/channel-folders').set('Cookie', owner.cookie);
    const b = await request(gw.app).get('/api/chat/channel-folders').set('Cookie', guest.cookie);
    expect([a.headers['x-cache'], b.headers['x-cache']]).toEqual(['MISS', 'HIT']);
  });

  it('when logged out, then the cookie is cleared and the session is revoked server-side', async () => {
    const gw = await sessionGateway();
    const { cookie } = await login(gw, 'member');
    const out = await request(gw.app)
      .post('/api/auth/logout')
      .set(BROWSER_HEADERS)
      .set('Cookie', cookie);
    expect(out.status).toBe(204);
    expect((out.headers['set-cookie'] as unknown as string[])[0]).toMatch(
      /^__Host-bff_session=; Path=\/; Expires=Thu, 01 Jan 1970/,
    );
    expect(await keysUnder(gw.inspector!, `${gw.prefix}session:`)).toEqual([]);
    // A copy of the old cookie is worthless.
    await request(gw.app).get('/api/chat/drafts').set('Cookie', cookie).expect(401);
    await request(gw.app).post('/api/auth/logout').set(BROWSER_HEADERS).expect(204);
  });

  it("when the chat server stops accepting the session's key, then the session ends and the browser gets 401", async () => {
    const gw = await sessionGateway();
    const { cookie } = await login(gw, 'member');
    upstreams.chat.faults.add({
      fault: {
        kind: 'status',
        status: 401,
        body: '{"result":"error","msg":"Invalid API key","code":"INVALID_API_KEY"}',
        headers: { 'www-authenticate': 'Basic realm="zulip"' },
      },
      times: 1,
    });
    const res = await request(gw.app).get('/api/chat/drafts').set('Cookie', cookie);
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'UNAUTHORIZED', source: 'chat' });
    expect(res.headers['www-authenticate']).toBeUndefined();
    expect((res.headers['set-cookie'] as unknown as string[])[0]).toMatch(/^__Host-bff_session=;/);
    await request(gw.app).get('/api/auth/session').set('Cookie', cookie).expect(401);
  });

  it('when Redis is down, then session routes answer 503, never 500 or a false "logged out"', async () => {
    const gw = await sessionGateway({}, { redisUrl: 'redis://127.0.0.1:9/0' });
    const res = await request(gw.app)
      .get('/api/auth/session')
      .set('Cookie', `__Host-bff_session=${'a'.repeat(43)}`);
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect(res.headers['retry-after']).toBe('1');
    const creds = upstreams.chat.credentials('member');
    const loginRes = await request(gw.app)
      .post('/api/auth/login')
      .set(BROWSER_HEADERS)
      .send({ email: creds.email, password: creds.password });
    expect(loginRes.status).toBe(503);
  });

  it('when the cookie is not Secure (local HTTP), then it has no __Host- prefix and still works', async () => {
    const gw = await sessionGateway({
      SESSION_COOKIE_SECURE: 'false',
      SESSION_COOKIE_SAMESITE: 'lax',
    });
    const { setCookie, cookie } = await login(gw, 'member');
    expect(setCookie).toMatch(
      /^bff_session=[\w-]{43}; Max-Age=43200; Path=\/; Expires=[^;]+; HttpOnly; SameSite=Lax$/,
    );
    await request(gw.app).get('/api/chat/drafts').set('Cookie', cookie).expect(200);
  });

  it('when the gateway runs in service mode, then there are no auth routes', async () => {
    const { email, apiKey } = upstreams.chat.credentials('administrator');
    const gw = await sessionGateway({
      CHAT_AUTH_MODE: 'service',
      CHAT_EMAIL: email,
      CHAT_API_KEY: apiKey,
    });
    await request(gw.app).post('/api/auth/login').set(BROWSER_HEADERS).send({}).expect(404);
    await request(gw.app).get('/api/auth/session').expect(404);
  });
});

describe('a refused key in a shared load', () => {
  it("when two users share a channel-folders load and the leader's key is refused, then only the leader's session ends", async () => {
    const gw = await sessionGateway();
    const member = await login(gw, 'member');
    const admin = await login(gw, 'administrator');
    upstreams.chat.requests.length = 0;
    upstreams.chat.faults.add({
      fault: {
        kind: 'status',
        status: 401,
        afterMs: 300,
        body: '{"result":"error","msg":"Invalid API key","code":"INVALID_API_KEY"}',
      },
      pathPrefix: '/api/v1/channel_folders',
      times: 1,
    });
    const first = request(gw.app).get('/api/chat/channel-folders').set('Cookie', member.cookie);
    const firstDone = first.then((r) => r);
    // The member's load is under way at the chat server when the admin asks.
    await upstreams.chat.received((r) => r.pathname === '/api/v1/channel_folders');
    const second = await request(gw.app)
      .get('/api/chat/channel-folders')
      .set('Cookie', admin.cookie);
    const leader = await firstDone;

    // One upstream call, made with the member's key: the admin joined it.
    expect(
      upstreams.chat.requests.filter((r) => r.pathname === '/api/v1/channel_folders'),
    ).toHaveLength(1);
    expect(leader.status).toBe(401);
    await request(gw.app).get('/api/auth/session').set('Cookie', member.cookie).expect(401);
    // The admin's own key was never refused: a transient error, and still logged in.
    expect(second.status).toBe(502);
    await request(gw.app).get('/api/auth/session').set('Cookie', admin.cookie).expect(200);
  });
});

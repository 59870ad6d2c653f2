import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { useUpstreams } from '../helpers/upstreams.js';

/* GET /api/bootstrap (contract section 2.1): the first screen in one call. */

const upstreams = useUpstreams();
const statusCalls = () =>
  upstreams.search.requests.filter((r) => r.pathname === '/v1/status').length;

interface Bootstrap {
  data: {
    session: Record<string, unknown> | null;
    channel_folders: unknown;
    drafts: unknown;
    search: { available: boolean };
  };
  errors: Record<string, unknown>[];
}

describe('GET /api/bootstrap', () => {
  it('when the gateway runs in service mode, then every part is there, each the body of its own route', async () => {
    const gw = await upstreams.serviceGateway('administrator');
    const res = await request(gw.app).get('/api/bootstrap');
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.body as Bootstrap;
    const admin = upstreams.chat.credentials('administrator');
    expect(body.data.session).toEqual({ mode: 'service', user: { email: admin.email } });
    const folders = await request(gw.app).get('/api/chat/channel-folders');
    const drafts = await request(gw.app).get('/api/chat/drafts');
    expect(body.data.channel_folders).toEqual(folders.body);
    expect(body.data.drafts).toEqual(drafts.body);
    expect(body.data.search).toEqual({ available: true });
    expect(body.errors).toEqual([]);
  });

  it('when nobody is logged in (session mode), then the user parts are null, there is no error, and it is 200', async () => {
    const gw = await upstreams.sessionGateway();
    const res = await request(gw.app).get('/api/bootstrap');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: { session: null, channel_folders: null, drafts: null, search: { available: true } },
      errors: [],
    });
    expect(upstreams.chat.requests).toHaveLength(0);
  });

  it('when a user is logged in, then the session part is what GET /api/auth/session says and the rest is theirs', async () => {
    const gw = await upstreams.sessionGateway();
    const cookie = await upstreams.login(gw, 'member');
    const res = await request(gw.app).get('/api/bootstrap').set('Cookie', cookie);
    const session = await request(gw.app).get('/api/auth/session').set('Cookie', cookie);
    const body = res.body as Bootstrap;
    expect(body.data.session).toEqual(session.body);
    expect(body.data.drafts).toEqual(
      (await request(gw.app).get('/api/chat/drafts').set('Cookie', cookie)).body,
    );
    expect(body.errors).toEqual([]);
  });

  it("when the chat server fails on drafts, then drafts is null with its route's problem and the rest of the screen is served", async () => {
    const gw = await upstreams.serviceGateway('administrator');
    upstreams.chat.faults.add({
      fault: { kind: 'status', status: 500 },
      pathPrefix: '/api/v1/drafts',
    });
    const res = await request(gw.app).get('/api/bootstrap').set('X-Request-Id', 'boot-1');
    expect(res.status).toBe(200);
    const body = res.body as Bootstrap;
    expect(body.data.drafts).toBeNull();
    expect(body.data.channel_folders).not.toBeNull();
    expect(body.errors).toEqual([
      expect.objectContaining({
        part: 'drafts',
        status: 502,
        code: 'UPSTREAM_ERROR',
        source: 'chat',
        requestId: 'boot-1',
        type: 'urn:bff-gateway:problem:upstream-error',
      }),
    ]);
  });

  it('when a part is slower than the one deadline, then the answer comes at the deadline with that part as a 504', async () => {
    const gw = await upstreams.serviceGateway('administrator', {
      BOOTSTRAP_TIMEOUT_MS: '1000',
      // The drafts call itself ends (and the gateway can stop) soon after the test.
      CHAT_TIMEOUT_MS: '1500',
    });
    // A first screen leaves the folders cached and the search status probed: the next one's
    // other parts answer from what the gateway holds, with no round trip to race the deadline,
    // so only the hanging part can miss it, however slow the machine (issue 31, item 10).
    await eventually(
      async () =>
        ((await request(gw.app).get('/api/bootstrap')).body as Bootstrap).data.channel_folders,
      { what: 'a first screen with the folders in it' },
    );
    const calls = {
      chat: upstreams.chat.requests.length,
      search: upstreams.search.requests.length,
    };
    // Drafts are never answered: an answer can only come from the bootstrap's own deadline.
    upstreams.chat.faults.add({ fault: { kind: 'hang' }, pathPrefix: '/api/v1/drafts' });
    const res = await request(gw.app).get('/api/bootstrap');
    // The only upstream call was the drafts one.
    expect(upstreams.chat.requests.slice(calls.chat).map((r) => r.pathname)).toEqual([
      '/api/v1/drafts',
    ]);
    expect(upstreams.search.requests.length).toBe(calls.search);
    // Drafts were asked for and never answered: the answer came before the slow part did.
    expect(upstreams.chat.requests.some((r) => r.pathname === '/api/v1/drafts')).toBe(true);
    const body = res.body as Bootstrap;
    expect(body.data.drafts).toBeNull();
    expect(body.data.channel_folders).not.toBeNull();
    expect(body.errors).toEqual([
      expect.objectContaining({
        part: 'drafts',
        status: 504,
        code: 'UPSTREAM_TIMEOUT',
        source: 'chat',
      }),
    ]);
  });

  it('when the search status endpoint fails, then search.available is false and that is not an error', async () => {
    const gw = await upstreams.serviceGateway('administrator');
    upstreams.search.faults.add({
      fault: { kind: 'status', status: 503 },
      pathPrefix: '/v1/status',
    });
    const body = (await request(gw.app).get('/api/bootstrap')).body as Bootstrap;
    expect(body.data.search).toEqual({ available: false });
    expect(body.errors).toEqual([]);
  });

  it('when many first screens load at once and again, then the search status is probed once, not per call', async () => {
    const gw = await upstreams.serviceGateway('administrator');
    await Promise.all(Array.from({ length: 10 }, () => request(gw.app).get('/api/bootstrap')));
    await request(gw.app).get('/api/bootstrap');
    expect(statusCalls()).toBe(1);
    const probe = upstreams.search.requests.find((r) => r.pathname === '/v1/status')!;
    expect(probe.headers['service-client-token']).toBeDefined();
  });

  it('when the session store is down, then session is null with a 503 problem for that part', async () => {
    const gw = await upstreams.gateway({
      cache: { redisUrl: 'redis://127.0.0.1:9/0' },
      env: { SESSION_COOKIE_SECURE: 'false' },
    });
    const res = await request(gw.app)
      .get('/api/bootstrap')
      .set('Cookie', `bff_session=${'a'.repeat(43)}`);
    expect(res.status).toBe(200);
    const body = res.body as Bootstrap;
    expect(body.data.session).toBeNull();
    expect(body.errors).toEqual([
      expect.objectContaining({ part: 'session', status: 503, code: 'SERVICE_UNAVAILABLE' }),
    ]);
  });
});

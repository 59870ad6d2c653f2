import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { BROWSER_HEADERS, type TestGateway } from '../helpers/test-gateway.js';
import { keysUnder } from '../helpers/test-redis.js';
import { useUpstreams } from '../helpers/upstreams.js';

const upstreams = useUpstreams({ cache: 'redis' });

function gateway(env: Record<string, string>, cache?: { redisUrl: string }, prefix?: string) {
  return upstreams.gateway({
    env: { ...env, ...(prefix ? { REDIS_KEY_PREFIX: prefix } : {}) },
    ...(cache ? { cache } : {}),
  });
}

const searchOnce = (gw: TestGateway, headers: Record<string, string> = {}) =>
  request(gw.app).get('/api/search?q=coffee').set(headers);

describe('rate limits', () => {
  it('when a client exceeds its limit, then it gets 429 with Retry-After and RateLimit headers, and no upstream call', async () => {
    const gw = await gateway({ RATE_LIMIT_PER_CLIENT: '3' });
    const ok = [await searchOnce(gw), await searchOnce(gw), await searchOnce(gw)];
    expect(ok.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(ok[0]!.headers['ratelimit-policy']).toBe('"client";q=3;w=60');
    expect(ok[2]!.headers['ratelimit']).toMatch(/^"client";r=0;t=\d+$/);
    const calls = upstreams.search.requests.length;
    const limited = await searchOnce(gw);
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ code: 'RATE_LIMITED', source: 'gateway' });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(upstreams.search.requests.length).toBe(calls);
  });

  it('when two instances share Redis, then they count together', async () => {
    const a = await gateway({ RATE_LIMIT_PER_CLIENT: '3' });
    const b = await gateway({ RATE_LIMIT_PER_CLIENT: '3' }, undefined, a.prefix);
    expect((await searchOnce(a)).status).toBe(200);
    expect((await searchOnce(b)).status).toBe(200);
    expect((await searchOnce(a)).status).toBe(200);
    expect((await searchOnce(b)).status).toBe(429);
  });

  it('when Redis is down, then each instance still limits on its own (never a 500, never unlimited)', async () => {
    const gw = await gateway({ RATE_LIMIT_PER_CLIENT: '2' }, { redisUrl: 'redis://127.0.0.1:9/0' });
    const statuses = [];
    for (let i = 0; i < 4; i += 1) statuses.push((await searchOnce(gw)).status);
    expect(statuses).toEqual([200, 200, 429, 429]);
  });

  it('when a session makes too many requests, then its own limit applies even under the client limit', async () => {
    const gw = await upstreams.sessionGateway({ RATE_LIMIT_PER_SESSION: '2' });
    const cookie = { Cookie: await upstreams.login(gw, 'member') };
    const statuses = [];
    for (let i = 0; i < 3; i += 1) statuses.push((await searchOnce(gw, cookie)).status);
    expect(statuses).toEqual([200, 200, 429]);
    expect((await searchOnce(gw)).status).toBe(200);
  });

  it('when a request carries a forged or unknown session cookie, then no counter is created for it', async () => {
    const gw = await gateway({ RATE_LIMIT_PER_SESSION: '2' });
    const forged = { Cookie: `__Host-bff_session=${'a'.repeat(43)}` };
    const statuses = [];
    for (let i = 0; i < 3; i += 1) statuses.push((await searchOnce(gw, forged)).status);
    expect(statuses).toEqual([200, 200, 200]);
    expect(await keysUnder(gw.inspector!, `${gw.prefix}ratelimit:session:`)).toEqual([]);
    expect(await keysUnder(gw.inspector!, `${gw.prefix}ratelimit:client:`)).toHaveLength(1);
  });

  it('when login attempts exceed the stricter login limit, then further attempts are 429 without reaching the chat server', async () => {
    const gw = await gateway({ LOGIN_RATE_LIMIT_PER_CLIENT: '2' });
    const attempt = () =>
      request(gw.app)
        .post('/api/auth/login')
        .set(BROWSER_HEADERS)
        .send({ email: 'marie@acme.test', password: 'wrong' });
    expect((await attempt()).status).toBe(401);
    expect((await attempt()).status).toBe(401);
    const limited = await attempt();
    expect(limited.status).toBe(429);
    expect(limited.headers['ratelimit-policy']).toBe('"login";q=2;w=900');
    expect(
      upstreams.chat.requests.filter((r) => r.pathname === '/api/v1/fetch_api_key'),
    ).toHaveLength(2);
  });

  it('when no proxy is trusted, then X-Forwarded-For cannot buy a fresh budget', async () => {
    const gw = await gateway({ RATE_LIMIT_PER_CLIENT: '2' });
    const statuses = [];
    for (const ip of ['198.51.100.1', '198.51.100.2', '198.51.100.3']) {
      statuses.push((await searchOnce(gw, { 'X-Forwarded-For': ip })).status);
    }
    expect(statuses).toEqual([200, 200, 429]);
  });

  it('when one proxy hop is trusted, then the address it reports is the client', async () => {
    const gw = await gateway({ RATE_LIMIT_PER_CLIENT: '1', TRUST_PROXY: '1' });
    expect((await searchOnce(gw, { 'X-Forwarded-For': '198.51.100.1' })).status).toBe(200);
    expect((await searchOnce(gw, { 'X-Forwarded-For': '198.51.100.2' })).status).toBe(200);
    expect((await searchOnce(gw, { 'X-Forwarded-For': '198.51.100.1' })).status).toBe(429);
  });
});

describe('rate limits by client network', () => {
  const from = (address: string) => ({ 'X-Forwarded-For': address });
  const clientKeys = async (gw: TestGateway) =>
    (await keysUnder(gw.inspector!, `${gw.prefix}ratelimit:client:`))
      .map((key) => key.slice(`${gw.prefix}ratelimit:client:`.length))
      .sort();

  it('when an IPv6 client rotates addresses inside its /64, then they share one budget and another /64 has its own', async () => {
    const gw = await gateway({ RATE_LIMIT_PER_CLIENT: '2', TRUST_PROXY: 'loopback' });
    expect((await searchOnce(gw, from('2001:db8:1:2::a'))).status).toBe(200);
    expect((await searchOnce(gw, from('2001:db8:1:2::a'))).status).toBe(200);
    const rotated = await searchOnce(gw, from('2001:db8:1:2:ffff:abcd:1234:5678'));
    expect(rotated.status).toBe(429);
    expect(rotated.body).toMatchObject({ code: 'RATE_LIMITED' });
    const neighbour = await searchOnce(gw, from('2001:0db8:0001:0003:0000:0000:0000:000a'));
    expect(neighbour.status).toBe(200);
    expect(neighbour.headers['ratelimit']).toMatch(/^"client";r=1;t=\d+$/);
    expect(await clientKeys(gw)).toEqual(['2001:db8:1:2::/64', '2001:db8:1:3::/64']);
  });

  it("when a client comes as an IPv4-mapped IPv6 address, then it shares its IPv4 address's budget", async () => {
    const gw = await gateway({ RATE_LIMIT_PER_CLIENT: '2', TRUST_PROXY: 'loopback' });
    expect((await searchOnce(gw, from('::ffff:203.0.113.5'))).status).toBe(200);
    expect((await searchOnce(gw, from('203.0.113.5'))).status).toBe(200);
    expect((await searchOnce(gw, from('::ffff:cb00:7105'))).status).toBe(429);
    expect((await searchOnce(gw, from('203.0.113.6'))).status).toBe(200);
    expect(await clientKeys(gw)).toEqual(['203.0.113.5', '203.0.113.6']);
  });

  it('when RATE_LIMIT_IPV6_PREFIX is 128, then each full address has its own budget', async () => {
    const gw = await gateway({
      RATE_LIMIT_PER_CLIENT: '1',
      TRUST_PROXY: 'loopback',
      RATE_LIMIT_IPV6_PREFIX: '128',
    });
    expect((await searchOnce(gw, from('2001:db8:1:2::a'))).status).toBe(200);
    expect((await searchOnce(gw, from('2001:db8:1:2::b'))).status).toBe(200);
    expect((await searchOnce(gw, from('2001:db8:1:2:0:0:0:a'))).status).toBe(429);
    expect(await clientKeys(gw)).toEqual(['2001:db8:1:2::a/128', '2001:db8:1:2::b/128']);
  });

  it('when failed logins come from addresses in one /64, then the login limit counts them together', async () => {
    const gw = await gateway({ LOGIN_RATE_LIMIT_PER_CLIENT: '2', TRUST_PROXY: 'loopback' });
    const attempt = (address: string) =>
      request(gw.app)
        .post('/api/auth/login')
        .set({ ...BROWSER_HEADERS, ...from(address) })
        .send({ email: 'marie@acme.test', password: 'wrong' });
    expect((await attempt('2001:db8:1:2::a')).status).toBe(401);
    expect((await attempt('2001:db8:1:2::b')).status).toBe(401);
    const limited = await attempt('2001:db8:1:2::c');
    expect(limited.status).toBe(429);
    expect(limited.headers['ratelimit-policy']).toBe('"login";q=2;w=900');
    expect((await attempt('2001:db8:1:3::a')).status).toBe(401);
  });

  it('when a client reaches a real ::1 listener and no proxy is trusted, then its requests are counted', async () => {
    const gw = await gateway({ RATE_LIMIT_PER_CLIENT: '3', HOST: '::1' });
    expect(gw.gateway.url).toMatch(/^http:\/\/\[::1\]:\d+$/);
    const remaining = [];
    for (let i = 0; i < 3; i += 1) {
      // A rotating X-Forwarded-For is ignored: nobody is trusted to report the client.
      const res = await request(gw.gateway.url)
        .get('/api/search?q=coffee')
        .set(from(`2001:db8:${i}::1`));
      expect(res.status).toBe(200);
      remaining.push(/;r=(\d+);/.exec(String(res.headers['ratelimit']))?.[1]);
    }
    expect(remaining).toEqual(['2', '1', '0']);
    expect((await request(gw.gateway.url).get('/api/search?q=coffee')).status).toBe(429);
    expect(await clientKeys(gw)).toEqual(['::/64']);
  });
});

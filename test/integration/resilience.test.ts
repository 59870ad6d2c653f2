import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROWSER_HEADERS } from '../helpers/test-gateway.js';
import { useUpstreams } from '../helpers/upstreams.js';

const upstreams = useUpstreams();

function gateway(env: Record<string, string> = {}, cache?: { redisUrl: string }) {
  return upstreams.serviceGateway('administrator', env, cache);
}

const searches = () => upstreams.search.requests.filter((r) => r.pathname === '/v1/search').length;

describe('retries', () => {
  it.each([
    ['a reset connection', { kind: 'reset' } as const],
    ['a 503', { kind: 'status', status: 503 } as const],
    ['a 502', { kind: 'status', status: 502 } as const],
  ])('when a search read meets %s once, then one retry answers it', async (_name, fault) => {
    const gw = await gateway();
    upstreams.search.faults.add({ fault, times: 1 });
    const res = await request(gw.app).get('/api/search?q=coffee');
    expect(res.status).toBe(200);
    expect(searches()).toBe(2);
  });

  it.each([
    ['a 500', { kind: 'status', status: 500 } as const, 502],
    ['a 429', { kind: 'status', status: 429, headers: { 'retry-after': '3' } } as const, 429],
    ['a timeout', { kind: 'hang' } as const, 504],
  ])('when a search read meets %s, then it is not retried', async (_name, fault, status) => {
    // Only the hang meets a short deadline, and misses it however slow the machine is; an
    // answer that does come is never raced against one (issue 31, item 10).
    const gw = await gateway(fault.kind === 'hang' ? { SEARCH_TIMEOUT_MS: '300' } : {});
    upstreams.search.faults.add({ fault, times: 1 });
    const res = await request(gw.app).get('/api/search?q=coffee');
    expect(res.status).toBe(status);
    expect(searches()).toBe(1);
  });

  it('when a read keeps failing, then there is at most one retry', async () => {
    const gw = await gateway();
    upstreams.search.faults.add({ fault: { kind: 'reset' } });
    await request(gw.app).get('/api/search?q=coffee').expect(502);
    expect(searches()).toBe(2);
  });

  it('when a chat read meets a reset once, then it is retried; an emoji deletion never is', async () => {
    const gw = await gateway();
    upstreams.chat.faults.add({ fault: { kind: 'reset' }, times: 1 });
    await request(gw.app).get('/api/chat/drafts').expect(200);
    expect(upstreams.chat.requests).toHaveLength(2);
    upstreams.chat.requests.length = 0;
    upstreams.chat.faults.add({ fault: { kind: 'status', status: 503 }, times: 1 });
    await request(gw.app).delete('/api/chat/emoji/green_tick').set(BROWSER_HEADERS).expect(502);
    expect(upstreams.chat.requests).toHaveLength(1);
  });
});

describe('circuit breaker', () => {
  const breakerEnv = {
    BREAKER_MIN_REQUESTS: '3',
    BREAKER_FAILURE_PERCENT: '50',
    BREAKER_OPEN_SECONDS: '1',
  };

  it('when the search service keeps failing, then the circuit opens: calls fail fast with 503 and Retry-After, and readiness shows it', async () => {
    const gw = await gateway(breakerEnv);
    upstreams.search.faults.add({ fault: { kind: 'status', status: 500 } });
    for (const q of ['a', 'b', 'c']) await request(gw.app).get(`/api/search?q=${q}`).expect(502);
    const calls = searches();
    const fast = await request(gw.app).get('/api/search?q=d');
    expect(fast.status).toBe(503);
    expect(fast.body).toMatchObject({ code: 'SERVICE_UNAVAILABLE', source: 'search' });
    expect(fast.headers['retry-after']).toBe('1');
    expect(searches()).toBe(calls);
    const ready = await request(gw.app).get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({
      status: 'degraded',
      checks: { search: { status: 'degraded', circuit: 'open' } },
    });
    expect(gw.logs.text()).toContain('circuit search open');

    // Once the open period is over, a probe goes through; the upstream has recovered.
    upstreams.search.faults.clear();
    await gw.logs.waitFor((line) => line['msg'] === 'circuit search half-open: probing');
    await request(gw.app).get('/api/search?q=e').expect(200);
    expect((await request(gw.app).get('/readyz')).body).toMatchObject({
      checks: { search: { circuit: 'closed' } },
    });
  });

  it('when the circuit is open and a stale entry exists, then the stale answer is served instead of the 503', async () => {
    const gw = await gateway({
      ...breakerEnv,
      SEARCH_CACHE_TTL_SECONDS: '0',
      SEARCH_CACHE_STALE_SECONDS: '0',
    });
    const fresh = await request(gw.app).get('/api/search?q=laptop').expect(200);
    upstreams.search.faults.add({ fault: { kind: 'status', status: 500 } });
    for (const q of ['a', 'b', 'c']) await request(gw.app).get(`/api/search?q=${q}`);
    const res = await request(gw.app).get('/api/search?q=laptop');
    expect(res.status).toBe(200);
    expect(res.headers['x-cache']).toBe('STALE');
    expect(res.text).toBe(fresh.text);
  });

  it("when the chat server answers the caller's mistakes, then they do not open the circuit", async () => {
    const gw = await gateway(breakerEnv);
    for (let i = 0; i < 5; i += 1)
      await request(gw.app).get('/api/chat/users/nobody@acme.test').expect(404);
    await request(gw.app).get('/api/chat/drafts').expect(200);
  });
});

describe('Redis that accepts but never answers', () => {
  let blackHole: Server;
  const sockets = new Set<Socket>();
  beforeAll(async () => {
    blackHole = createServer((socket) => {
      sockets.add(socket);
    });
    await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => blackHole.close(() => resolve()));
  });

  it('then after a few timeouts Redis is skipped: requests still succeed and readiness says so', async () => {
    const port = (blackHole.address() as AddressInfo).port;
    const gw = await gateway(
      { REDIS_COMMAND_TIMEOUT_MS: '50' },
      { redisUrl: `redis://127.0.0.1:${port}/0` },
    );
    for (let i = 0; i < 4; i += 1)
      await request(gw.app).get(`/api/search?q=coffee${i}`).expect(200);
    // Each use of Redis has its own breaker; reads and counters share one round trip.
    expect(gw.logs.text()).toMatch(/circuit redis-limits open/);
    const ready = await request(gw.app).get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ checks: { cache: { status: 'degraded' } } });
  });
});

import request from 'supertest';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createSearchSimulator,
  type SearchSimulator,
} from '../../simulators/search/search-simulator.js';
import { rawRequest } from '../helpers/raw-request.js';
import {
  BROWSER_HEADERS,
  SEARCH_TOKEN,
  createTestGateway,
  type TestGateway,
} from '../helpers/test-gateway.js';

let sim: SearchSimulator;
let gw: TestGateway;

beforeAll(async () => {
  sim = createSearchSimulator({ clientToken: SEARCH_TOKEN });
  await sim.listen();
});
afterAll(() => sim.close());
beforeEach(async () => {
  sim.requests.length = 0;
  sim.faults.clear();
  gw = await createTestGateway({
    searchOrigin: sim.origin,
    env: { SEARCH_REDIRECT_TIMEOUT_MS: '400' },
  });
});
afterEach(() => gw.close());

describe('GET /api/search/url', () => {
  it('when a result link is followed, then the query string reaches /v1/url byte-for-byte and the 302 passes through', async () => {
    const query =
      "pid=prd-1&sid=ab%2fCD&rp=3&flag&sp=a+b%20c&x=%7e'!*()&y=|{}^`&u=https%3A%2F%2Fshop.example%2Fp%3Fa%3D1%26b%3D2";
    const res = await rawRequest(gw.app, {
      path: `/api/search/url?${query}`,
      headers: {
        cookie: 'session=browser-cookie',
        authorization: 'Bearer browser-token',
        'x-request-id': 'click-1',
      },
    });
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('https://shop.example/p?a=1&b=2');
    expect(res.headers['set-cookie']).toBeUndefined();
    const upstream = sim.requests.at(-1)!;
    expect(upstream.url).toBe(`/v1/url?${query}`);
    expect(upstream.headers.cookie).toBeUndefined();
    expect(upstream.headers.authorization).toBeUndefined();
    expect(upstream.headers['service-client-token']).toBeUndefined();
    expect(upstream.headers['x-request-id']).toBe('click-1');
    expect(upstream.headers.host).toBe(new URL(sim.origin).host);
    expect(sim.clicks.at(-1)?.rp).toBe(3);
  });

  it('when the upstream rejects the link, then it is a 400 envelope from the search source', async () => {
    const res = await request(gw.app).get('/api/search/url?pid=1&rp=1').redirects(0);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'BAD_REQUEST', source: 'search' });
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  });

  it.each([
    ['resets the connection', { kind: 'reset' } as const, 502, 'UPSTREAM_UNAVAILABLE'],
    ['is slower than the deadline', { kind: 'delay', ms: 1500 } as const, 504, 'UPSTREAM_TIMEOUT'],
    ['answers 503', { kind: 'status', status: 503 } as const, 502, 'UPSTREAM_ERROR'],
    [
      'answers 429',
      { kind: 'status', status: 429, headers: { 'retry-after': '9' } } as const,
      429,
      'RATE_LIMITED',
    ],
  ])('when the upstream %s, then it is %s %s', async (_name, fault, status, code) => {
    sim.faults.add({ fault });
    const res = await request(gw.app)
      .get('/api/search/url?u=https%3A%2F%2Fshop.example%2F&rp=1')
      .redirects(0);
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({
      code,
      source: 'search',
      requestId: res.headers['x-request-id'],
    });
    if (status === 429) expect(res.headers['retry-after']).toBe('9');
  });

  it('when the search service is unreachable, then it is 502', async () => {
    const dead = await createTestGateway({ searchOrigin: 'http://127.0.0.1:9' });
    const res = await request(dead.app)
      .get('/api/search/url?u=https%3A%2F%2Fshop.example%2F')
      .redirects(0);
    await dead.close();
    expect(res.status).toBe(502);
    expect(res.body).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
  });

  it('when the method is not GET, then it is 405 with Allow and no upstream call', async () => {
    const res = await request(gw.app).delete('/api/search/url?u=x').set(BROWSER_HEADERS);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET');
    expect(sim.requests).toHaveLength(0);
  });
});

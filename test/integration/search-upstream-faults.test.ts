import request from 'supertest';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createSearchSimulator,
  type SearchSimulator,
} from '../../simulators/search/search-simulator.js';
import { SEARCH_TOKEN, createTestGateway, type TestGateway } from '../helpers/test-gateway.js';
import { keysUnder } from '../helpers/test-redis.js';

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
    cache: 'redis',
    env: { SEARCH_TIMEOUT_MS: '400' },
  });
});
afterEach(() => gw.close());

const schemaBreach = JSON.stringify({
  itemListElement: [{ name: 'no offers' }],
  itemScore: [1],
  queryDuration: 1,
});
const scoreMismatch = JSON.stringify({ itemListElement: [], itemScore: [0.5], queryDuration: 1 });

describe('search upstream faults', () => {
  it.each([
    ['answers after the deadline', { kind: 'delay', ms: 1500 } as const, 504, 'UPSTREAM_TIMEOUT'],
    ['never answers', { kind: 'hang' } as const, 504, 'UPSTREAM_TIMEOUT'],
    ['resets the connection', { kind: 'reset' } as const, 502, 'UPSTREAM_UNAVAILABLE'],
    ['sends a body that is not JSON', { kind: 'malformed' } as const, 502, 'UPSTREAM_BAD_RESPONSE'],
    ['cuts the body short', { kind: 'truncated' } as const, 502, 'UPSTREAM_UNAVAILABLE'],
    ['answers 500', { kind: 'status', status: 500 } as const, 502, 'UPSTREAM_ERROR'],
    ['answers 503', { kind: 'status', status: 503 } as const, 502, 'UPSTREAM_ERROR'],
    [
      'breaks the result schema',
      { kind: 'status', status: 200, body: schemaBreach } as const,
      502,
      'UPSTREAM_BAD_RESPONSE',
    ],
    [
      'sends scores that do not match items',
      { kind: 'status', status: 200, body: scoreMismatch } as const,
      502,
      'UPSTREAM_BAD_RESPONSE',
    ],
    [
      'redirects',
      { kind: 'status', status: 302, headers: { location: 'http://127.0.0.1:9/' } } as const,
      502,
      'UPSTREAM_BAD_RESPONSE',
    ],
    ['answers 404', { kind: 'status', status: 404 } as const, 502, 'UPSTREAM_BAD_RESPONSE'],
  ])(
    'when the upstream %s, then it is %s %s and nothing is cached',
    async (_name, fault, status, code) => {
      sim.faults.add({ fault });
      const res = await request(gw.app).get('/api/search?q=headphones');
      expect(res.status).toBe(status);
      expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(res.body).toMatchObject({ status, code, source: 'search' });
      expect(JSON.stringify(res.body)).not.toContain(sim.origin);
      expect(JSON.stringify(res.body)).not.toMatch(/at .*\.ts:\d+/); // no stack trace
      expect(await keysUnder(gw.inspector!, `${gw.prefix}search:`)).toEqual([]);

      sim.faults.clear();
      const again = await request(gw.app).get('/api/search?q=headphones');
      expect(again.status).toBe(200);
      expect(again.headers['x-cache']).toBe('MISS');
    },
  );

  it('when the upstream rejects the gateway token, then it is 502 without WWW-Authenticate', async () => {
    sim.faults.add({
      fault: {
        kind: 'status',
        status: 401,
        headers: { 'www-authenticate': 'Token realm="search"' },
      },
    });
    const res = await request(gw.app).get('/api/search?q=headphones');
    expect(res.status).toBe(502);
    expect(res.body).toMatchObject({ code: 'UPSTREAM_AUTH_FAILED', source: 'search' });
    expect(res.headers['www-authenticate']).toBeUndefined();
  });

  it('when the real simulator gets a wrong token, then the gateway reports its own credentials as the problem', async () => {
    const wrong = await createTestGateway({
      searchOrigin: sim.origin,
      env: { SEARCH_CLIENT_TOKEN: 'wrong-token' },
    });
    const res = await request(wrong.app).get('/api/search?q=headphones');
    await wrong.close();
    expect(res.status).toBe(502);
    expect(res.body).toMatchObject({ code: 'UPSTREAM_AUTH_FAILED' });
  });

  it.each([
    ['seconds', () => '7', /^7$/],
    ['an HTTP date 30 s ahead', () => new Date(Date.now() + 30_000).toUTCString(), /^(29|30|31)$/],
    ['nothing', () => undefined, /^1$/],
  ])(
    'when the upstream answers 429 with Retry-After as %s, then it is 429 with whole seconds',
    async (_name, header, expected) => {
      const value = header();
      sim.faults.add({
        fault: {
          kind: 'status',
          status: 429,
          headers: value === undefined ? {} : { 'retry-after': value },
        },
      });
      const res = await request(gw.app).get('/api/search?q=headphones');
      expect(res.status).toBe(429);
      expect(res.body).toMatchObject({ code: 'RATE_LIMITED', source: 'search' });
      expect(res.headers['retry-after']).toMatch(expected);
    },
  );

  it('when the upstream is slow, then the failure is logged with the request id on an error line', async () => {
    sim.faults.add({ fault: { kind: 'delay', ms: 1500 } });
    await request(gw.app).get('/api/search?q=headphones').set('X-Request-Id', 'slow-1').expect(504);
    const line = gw.logs
      .lines()
      .find((l) => (l['req'] as { id?: string } | undefined)?.id === 'slow-1');
    expect(line).toMatchObject({ level: 50, res: { statusCode: 504 } });
    expect(line?.['err']).toBeDefined();
  });

  it('when the search service cannot be reached at all, then it is 502', async () => {
    const dead = await createTestGateway({ searchOrigin: 'http://127.0.0.1:9' });
    const res = await request(dead.app).get('/api/search?q=headphones');
    await dead.close();
    expect(res.status).toBe(502);
    expect(res.body).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', source: 'search' });
  });
});

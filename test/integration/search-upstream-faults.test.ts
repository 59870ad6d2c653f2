import request from 'supertest';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createSearchSimulator,
  type SearchSimulator,
} from '../../simulators/search/search-simulator.js';
import type { Fault } from '../../simulators/sim-faults.js';
import { SEARCH_TOKEN, createTestGateway, type TestGateway } from '../helpers/test-gateway.js';
import { keysUnder } from '../helpers/test-redis.js';

let sim: SearchSimulator;
let gw: TestGateway;
const others: TestGateway[] = [];

beforeAll(async () => {
  sim = createSearchSimulator({ clientToken: SEARCH_TOKEN });
  await sim.listen();
});
afterAll(() => sim.close());
beforeEach(async () => {
  sim.requests.length = 0;
  sim.faults.clear();
  gw = await createTestGateway({ searchOrigin: sim.origin, cache: 'redis' });
});
afterEach(async () => {
  for (const other of others.splice(0)) await other.close();
  await gw.close();
});

/*
 * Only an upstream that answers after the deadline, or never, meets a short one: its verdict is
 * the same however slow the machine is (the deadline's timer is due first). Every answer that
 * does come is judged under the default deadline, so that a slow turn of a loaded machine is
 * never taken for a slow search service (issue 31, item 10).
 */
const SHORT_DEADLINE_MS = 400;
const pastTheDeadline = (fault: Fault) => fault.kind === 'delay' || fault.kind === 'hang';

/** An instance with the short deadline, on gw's cache (same prefix), so gw sees what it stored. */
async function shortDeadline(): Promise<TestGateway> {
  const short = await createTestGateway({
    searchOrigin: sim.origin,
    cache: 'redis',
    env: { SEARCH_TIMEOUT_MS: String(SHORT_DEADLINE_MS), REDIS_KEY_PREFIX: gw.prefix },
  });
  others.push(short);
  return short;
}

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
      const first = pastTheDeadline(fault) ? await shortDeadline() : gw;
      const res = await request(first.app).get('/api/search?q=headphones');
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
    ['seconds', '7', '7'],
    ['nothing', undefined, '1'],
  ])(
    'when the upstream answers 429 with Retry-After as %s, then it is 429 with whole seconds',
    async (_name, value, expected) => {
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
      expect(res.headers['retry-after']).toBe(expected);
    },
  );

  it('when the upstream answers 429 with Retry-After as an HTTP date 30 s ahead, then it is 429 with the whole seconds left until then', async () => {
    const date = new Date(Date.now() + 30_000).toUTCString();
    sim.faults.add({ fault: { kind: 'status', status: 429, headers: { 'retry-after': date } } });
    const before = Date.now();
    const res = await request(gw.app).get('/api/search?q=headphones');
    const after = Date.now();
    expect(res.status).toBe(429);
    expect(res.body).toMatchObject({ code: 'RATE_LIMITED', source: 'search' });
    // The gateway read its clock somewhere between before and after: the seconds it sent are
    // those left until the date from a moment in that span, however long the request took.
    const left = (at: number) => Math.ceil((Date.parse(date) - at) / 1000);
    const seconds = Number(res.headers['retry-after']);
    expect(seconds).toBeGreaterThanOrEqual(left(after));
    expect(seconds).toBeLessThanOrEqual(left(before));
  });

  it('when the upstream is slow, then the failure is logged with the request id on an error line', async () => {
    sim.faults.add({ fault: { kind: 'delay', ms: 1500 } });
    const short = await shortDeadline();
    await request(short.app)
      .get('/api/search?q=headphones')
      .set('X-Request-Id', 'slow-1')
      .expect(504);
    const line = short.logs
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

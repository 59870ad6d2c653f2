import { describe, expect, it } from 'vitest';
import { sendWire, wireRequest, type WireResponse } from '../adversarial/hostile-helpers.js';
import type { TestGateway } from '../helpers/test-gateway.js';
import { useUpstreams } from '../helpers/upstreams.js';

/**
 * One request target, one reading (issue 17 row 4): the hit path and the router must agree on
 * what a target asks for, or a cached entry answers a request the route would read otherwise.
 * Raw sockets, so the target reaches the gateway exactly as written.
 */
const upstreams = useUpstreams({ cache: 'redis' });

const get = (gw: TestGateway, target: string): Promise<WireResponse> =>
  sendWire(gw.app, wireRequest({ method: 'GET', target, headers: [['Host', 'gw.test']] }));

const searchCalls = () => upstreams.search.requests.filter((r) => r.pathname === '/v1/search');
const queriesSent = () =>
  searchCalls().map((r) => new URL(r.url, 'http://search.test').searchParams.get('q'));
const problem = (res: WireResponse) => JSON.parse(res.text) as { code: string; status: number };

describe('the request target is read once, at the edge', () => {
  it('when a target holds #, then it is 400 problem+json before any cache read or upstream call, even with the entry cached', async () => {
    const gw = await upstreams.gateway();
    // The entry for q = "laptop#x" is cached (spelled %23, as a browser sends it)...
    expect((await get(gw, '/api/search?k=1&q=laptop%23x')).status).toBe(200);
    await gw.loader.settled(); // the entry is written off the answer's path
    expect((await get(gw, '/api/search?k=1&q=laptop%23x')).headers['x-cache']).toEqual(['HIT']);
    const before = searchCalls().length;
    // ...and a raw fragment neither hits it nor reaches the router as "laptop".
    for (const target of ['/api/search?k=1&q=laptop#x', '/api/search#frag', '/api/chat/drafts#']) {
      const res = await get(gw, target);
      expect(res.status, target).toBe(400);
      expect(res.headers['content-type']).toEqual(['application/problem+json; charset=utf-8']);
      expect(problem(res)).toMatchObject({ code: 'BAD_REQUEST', status: 400 });
      expect(res.headers['x-request-id']).toHaveLength(1);
    }
    expect(searchCalls()).toHaveLength(before);
  });

  it('when %23 spells a # inside the query, then the miss and the hit answer the same query', async () => {
    const gw = await upstreams.gateway();
    const miss = await get(gw, '/api/search?k=2&q=laptop%23x');
    await gw.loader.settled();
    const hit = await get(gw, '/api/search?k=2&q=laptop%23x');
    expect([miss.headers['x-cache'], hit.headers['x-cache']]).toEqual([['MISS'], ['HIT']]);
    expect(hit.text).toBe(miss.text);
    expect(queriesSent()).toEqual(['laptop#x']);
  });

  it('when a target repeats ?, then only the first splits, for the hit path and the router alike', async () => {
    const gw = await upstreams.gateway();
    const miss = await get(gw, '/api/search?k=2&q=usb?c');
    await gw.loader.settled();
    const hit = await get(gw, '/api/search?k=2&q=usb?c');
    expect([miss.status, hit.status]).toEqual([200, 200]);
    expect([miss.headers['x-cache'], hit.headers['x-cache']]).toEqual([['MISS'], ['HIT']]);
    expect(hit.text).toBe(miss.text);
    expect(queriesSent()).toEqual(['usb?c']);
  });

  it('when the target is in absolute form, then it is the same resource as its origin form: a hit for the same entry', async () => {
    const gw = await upstreams.gateway();
    const origin = await get(gw, '/api/search?k=3&q=monitor');
    await gw.loader.settled();
    const absolute = await get(gw, 'http://gw.test/api/search?k=3&q=monitor');
    expect(absolute.status).toBe(200);
    expect(absolute.headers['x-cache']).toEqual(['HIT']);
    expect(absolute.text).toBe(origin.text);
    expect(queriesSent()).toEqual(['monitor']);
  });
});

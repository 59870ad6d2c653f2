import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { TestGateway } from '../helpers/test-gateway.js';
import { useUpstreams } from '../helpers/upstreams.js';

/*
 * Contract section 4, one upstream call per key across the fleet, on one real Redis: what
 * happens when the instance holding a key's lock never finishes, and how stale entries are
 * refreshed once for all instances. (test/scale-out runs the same on a Cluster and Sentinel.)
 */

const upstreams = useUpstreams();

async function pair(env: Record<string, string> = {}) {
  const shared = { REDIS_KEY_PREFIX: `fleet:${randomUUID()}:`, ...env };
  const a = await upstreams.gateway({ cache: 'redis', env: shared });
  const b = await upstreams.gateway({ cache: 'redis', env: shared });
  return { a, b };
}

const searchCalls = () =>
  upstreams.search.requests.filter((r) => r.pathname === '/v1/search').length;
const search = (gw: TestGateway, q: string) => request(gw.app).get(`/api/search?q=${q}&k=3`);

describe('one upstream call per key across instances', () => {
  it('when the instance holding the lock never gets its answer, then the other waits half its deadline and makes its own call', async () => {
    const { a, b } = await pair({ SEARCH_TIMEOUT_MS: '1500' });
    // A's call hangs until its deadline; B's own call, made after its wait, is answered.
    upstreams.search.faults.add({ fault: { kind: 'hang' }, pathPrefix: '/v1/search', times: 1 });
    let aSettled = false;
    const onA = search(a, 'tea+kettle').then((res) => {
      aSettled = true;
      return res;
    });
    await upstreams.search.received((r) => r.pathname === '/v1/search');
    const onB = await search(b, 'tea+kettle');
    expect(onB.status).toBe(200);
    expect(onB.headers['x-cache']).toBe('MISS');
    expect(aSettled).toBe(false);
    expect(searchCalls()).toBe(2);
    expect((await onA).status).toBe(504);
  });

  it('when an entry goes stale on both instances at once, then one background refresh runs for both', async () => {
    const { a, b } = await pair({
      SEARCH_CACHE_TTL_SECONDS: '1',
      SEARCH_CACHE_STALE_SECONDS: '60',
      CACHE_TTL_JITTER_PERCENT: '0',
    });
    expect((await search(a, 'french+press')).status).toBe(200);
    expect(searchCalls()).toBe(1);
    // The refresh is slow, so the other instance's stale answers come while it runs.
    upstreams.search.faults.add({
      fault: { kind: 'delay', ms: 800 },
      pathPrefix: '/v1/search',
      times: 1,
    });
    // Wait for the entry to turn stale: no event says when an expiry passes.
    let stale = await search(a, 'french+press');
    for (let i = 0; i < 40 && stale.headers['x-cache'] !== 'STALE'; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      stale = await search(a, 'french+press');
    }
    expect(stale.headers['x-cache']).toBe('STALE');
    // That request began A's refresh; B's stale answers come while it runs.
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => search(i % 2 === 0 ? b : a, 'french+press')),
    );
    expect(answers.every((r) => r.status === 200)).toBe(true);
    await a.loader.settled();
    await b.loader.settled();
    expect(answers.filter((r) => r.headers['x-cache'] === 'STALE').length).toBe(10);
    // The first request, then one refresh for both instances (not one per instance).
    expect(searchCalls()).toBe(2);
  });
});

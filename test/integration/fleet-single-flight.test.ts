import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { toRepresentation } from '../../src/cache/cache-entry.js';
import { lockKeyOf, waitersKeyOf } from '../../src/cache/flight-coordinator.js';
import { startHoldProxy } from '../harness/hold-proxy.js';
import { createTestClock } from '../helpers/test-clock.js';
import type { TestGateway } from '../helpers/test-gateway.js';
import { useUpstreams } from '../helpers/upstreams.js';

/*
 * Contract section 4, one upstream call per key across the fleet, on one real Redis: what
 * happens when the instance holding a key's lock never finishes, and how stale entries are
 * refreshed once for all instances. (test/scale-out runs the same on a Cluster and Sentinel.)
 */

const upstreams = useUpstreams();

async function pair(env: Record<string, string> = {}, now?: () => number) {
  const shared = { REDIS_KEY_PREFIX: `fleet:${randomUUID()}:`, ...env };
  const a = await upstreams.gateway({ cache: 'redis', env: shared, ...(now ? { now } : {}) });
  const b = await upstreams.gateway({ cache: 'redis', env: shared, ...(now ? { now } : {}) });
  return { a, b };
}

const searchCalls = () =>
  upstreams.search.requests.filter((r) => r.pathname === '/v1/search').length;
const firstCall = () => upstreams.search.requests.find((r) => r.pathname === '/v1/search');
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
    // The second call is explained where an operator looks: B's log, with the bound it waited.
    expect(b.logs.text()).toContain('did not finish within the wait; loading here too');
    expect(b.logs.text()).toContain('"waitedMs":750');
    expect(a.logs.text()).not.toContain('did not finish within the wait');
    expect((await onA).status).toBe(504);
  });

  it('when an entry goes stale on both instances at once, then one background refresh runs for both', async () => {
    // Both instances reach the search service through a proxy that can keep its answers back,
    // and share one test clock: the entry turns stale when the test says so.
    const proxy = await startHoldProxy({
      host: '127.0.0.1',
      port: Number(new URL(upstreams.search.origin).port),
    });
    const clock = createTestClock();
    const { a, b } = await pair(
      {
        SEARCH_BASE_URL: `http://${proxy.host}:${proxy.port}`,
        SEARCH_CACHE_TTL_SECONDS: '1',
        SEARCH_CACHE_STALE_SECONDS: '60',
        CACHE_TTL_JITTER_PERCENT: '0',
      },
      clock.now,
    );
    try {
      expect((await search(a, 'french+press')).status).toBe(200);
      expect(searchCalls()).toBe(1);
      await a.loader.settled();
      // The refresh's answer is kept back, so the other instance's stale answers come while it runs.
      proxy.holdWhen(/GET \/v1\/search/);
      clock.advance(1000);
      const stale = await search(a, 'french+press');
      expect(stale.headers['x-cache']).toBe('STALE');
      // That request began A's refresh; B's stale answers come while it runs.
      await upstreams.search.received((r) => r.pathname === '/v1/search' && r !== firstCall());
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => search(i % 2 === 0 ? b : a, 'french+press')),
      );
      expect(answers.every((r) => r.status === 200)).toBe(true);
      proxy.release();
      await a.loader.settled();
      await b.loader.settled();
      expect(answers.filter((r) => r.headers['x-cache'] === 'STALE').length).toBe(10);
      // The first request, then one refresh for both instances (not one per instance).
      expect(searchCalls()).toBe(2);
    } finally {
      proxy.release();
      await proxy.close();
    }
  });

  it('when a request that waits for the lock reaches the loader before the request of the same instance that holds it, then the holder loads and both get its answer at once', async () => {
    // The admission replies came in order (the holder's first), but the holder's request was
    // the slower to reach the loader: on a cold start, CI saw both instances wait out their
    // whole wait and then call the search service once each.
    const gw = await upstreams.gateway({ cache: 'redis', env: { SEARCH_TIMEOUT_MS: '60000' } });
    const key = `search:v3:test:{${randomUUID()}}`;
    const token = 'holder-token';
    // What the admission script does on finding nothing: the holder's lock, the waiter's mark.
    await gw.inspector!.set(`${gw.prefix}${lockKeyOf(key)}`, token, 'PX', 60_000, 'NX');
    await gw.inspector!.set(`${gw.prefix}${waitersKeyOf(key)}`, '1', 'PX', 60_000);
    let loads = 0;
    const load = () => {
      loads += 1;
      return Promise.resolve(
        toRepresentation({ answer: 'from the holder' }, 'application/json; charset=utf-8'),
      );
    };
    const windows = { ttlSeconds: 60, staleSeconds: 0, staleIfErrorSeconds: 0 };
    const waiter = gw.loader.get(key, windows, load, {
      known: { entry: undefined, claim: { state: 'busy' } },
    });
    const holder = gw.loader.get(key, windows, load, {
      known: { entry: undefined, claim: { state: 'ours', token } },
    });
    // Without the holder's load, the waiter would wait 30 s (half the deadline) and the test
    // would time out first.
    const [waited, held] = await Promise.all([waiter, holder]);
    expect(held.cacheStatusParams).toBe('fwd=miss; stored');
    expect(waited.representation.body.equals(held.representation.body)).toBe(true);
    expect(loads).toBe(1);
    expect(await gw.inspector!.exists(`${gw.prefix}${lockKeyOf(key)}`)).toBe(0);
  });
});

import { createHash } from 'node:crypto';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createTestClock } from '../helpers/test-clock.js';
import { APP_ORIGIN, type TestGateway } from '../helpers/test-gateway.js';
import { useUpstreams } from '../helpers/upstreams.js';

/*
 * Revalidation and cache visibility (contract section 4): a strong ETag over the exact bytes,
 * 304 on a weakly matching If-None-Match, Cache-Control private, no-cache, RFC 9211
 * Cache-Status, Vary merged.
 */

const upstreams = useUpstreams();
const searches = () => upstreams.search.requests.filter((r) => r.pathname === '/v1/search').length;
const digestOf = (body: string) => `"${createHash('sha256').update(body).digest('base64url')}"`;

describe.each(['memory', 'redis'] as const)('revalidating search answers (%s)', (cache) => {
  // The identity representation: its ETag is over the bytes the test reads (each coding has its
  // own, test/integration/compression.test.ts).
  const search = (gw: TestGateway, headers: Record<string, string> = {}) =>
    request(gw.app)
      .get('/api/search?q=coffee&k=3')
      .set({ Origin: APP_ORIGIN, 'Accept-Encoding': 'identity', ...headers });

  it('when a search is answered, then it carries a strong ETag over its exact bytes, private no-cache, and Cache-Status', async () => {
    // A clock that stands still between the store and the hit: the ttl left is then exactly the
    // stored TTL (60 s ± 10% jitter), however long a loaded machine takes between the two.
    const gw = await upstreams.gateway({ cache, now: createTestClock().now });
    const miss = await search(gw);
    expect(miss.status).toBe(200);
    expect(miss.headers['etag']).toBe(digestOf(miss.text));
    expect(miss.headers['cache-control']).toBe('private, no-cache');
    expect(miss.headers['cache-status']).toBe('bff; fwd=miss; stored');
    expect(miss.headers['vary']).toBe('Origin, Accept, Accept-Encoding');
    await gw.loader.settled();
    const hit = await search(gw);
    expect(hit.headers['x-cache']).toBe('HIT');
    expect(hit.headers['etag']).toBe(miss.headers['etag']);
    expect(hit.headers['cache-status']).toMatch(/^bff; hit; ttl=(5[4-9]|6[0-6])$/);
    expect(hit.headers['vary']).toBe('Origin, Accept, Accept-Encoding');
  });

  it.each([
    ['the ETag itself', (etag: string) => etag],
    ['the ETag marked weak', (etag: string) => `W/${etag}`],
    ['a list holding it', (etag: string) => `"other", ${etag}`],
    ['*', () => '*'],
  ])(
    'when If-None-Match is %s, then the answer is 304 without a body and without an upstream call',
    async (_name, ifNoneMatch) => {
      const gw = await upstreams.gateway({ cache });
      const first = await search(gw);
      await gw.loader.settled();
      const calls = searches();
      const res = await search(gw, {
        'If-None-Match': ifNoneMatch(first.headers['etag'] as string),
      });
      expect(res.status).toBe(304);
      expect(res.text).toBe('');
      expect(res.headers['content-length']).toBeUndefined();
      expect(res.headers['etag']).toBe(first.headers['etag']);
      expect(res.headers['cache-control']).toBe('private, no-cache');
      expect(res.headers['x-cache']).toBe('HIT');
      expect(res.headers['cache-status']).toMatch(/^bff; hit; ttl=\d+$/);
      expect(res.headers['vary']).toBe('Origin, Accept, Accept-Encoding');
      expect(searches()).toBe(calls);
    },
  );

  it('when If-None-Match names another representation, then the full answer is sent', async () => {
    const gw = await upstreams.gateway({ cache });
    await search(gw);
    const res = await search(gw, { 'If-None-Match': '"not-this-one", W/"nor-this"' });
    expect(res.status).toBe(200);
    expect((res.body as { itemListElement: unknown[] }).itemListElement).toHaveLength(3);
  });
});

describe('Cache-Status beyond a plain hit', () => {
  it('when concurrent misses share one upstream call, then the one that made it says stored and the others collapsed', async () => {
    const gw = await upstreams.gateway();
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => request(gw.app).get('/api/search?q=laptop&k=2')),
    );
    const statuses = answers.map((r) => r.headers['cache-status'] as string).sort();
    expect(statuses.filter((s) => s === 'bff; fwd=miss; stored')).toHaveLength(1);
    expect(statuses.filter((s) => s === 'bff; fwd=miss; collapsed').length).toBe(
      statuses.length - 1 - statuses.filter((s) => s.startsWith('bff; hit')).length,
    );
    expect(searches()).toBe(1);
  });

  it('when a stale entry is served while it refreshes, then its ttl is negative; when served because the upstream failed, it says fwd=stale with the status', async () => {
    const gw = await upstreams.gateway({
      env: {
        SEARCH_CACHE_TTL_SECONDS: '0',
        SEARCH_CACHE_STALE_SECONDS: '60',
        SEARCH_CACHE_STALE_IF_ERROR_SECONDS: '120',
      },
    });
    await request(gw.app).get('/api/search?q=tea').expect(200);
    await gw.loader.settled();
    const stale = await request(gw.app).get('/api/search?q=tea');
    expect(stale.headers['x-cache']).toBe('STALE');
    expect(stale.headers['cache-status']).toMatch(/^bff; hit; ttl=-\d+$/);
    await gw.loader.settled();

    const failing = await upstreams.gateway({
      env: {
        SEARCH_CACHE_TTL_SECONDS: '0',
        SEARCH_CACHE_STALE_SECONDS: '0',
        SEARCH_CACHE_STALE_IF_ERROR_SECONDS: '120',
      },
    });
    await request(failing.app).get('/api/search?q=kettle').expect(200);
    await failing.loader.settled();
    upstreams.search.faults.add({ fault: { kind: 'status', status: 503 } });
    const fallback = await request(failing.app).get('/api/search?q=kettle');
    expect(fallback.headers['x-cache']).toBe('STALE');
    expect(fallback.headers['cache-status']).toBe('bff; fwd=stale; fwd-status=502');
  });
});

describe('revalidating channel folders', () => {
  it('when the folders are asked again with their ETag, then the answer is 304 and no chat call is made', async () => {
    const gw = await upstreams.serviceGateway('administrator', {}, 'redis');
    const first = await request(gw.app).get('/api/chat/channel-folders').expect(200);
    expect(first.headers['etag']).toBe(digestOf(first.text));
    expect(first.headers['cache-control']).toBe('private, no-cache');
    await gw.loader.settled();
    const calls = upstreams.chat.requests.length;
    const again = await request(gw.app)
      .get('/api/chat/channel-folders')
      .set('If-None-Match', first.headers['etag'] as string);
    expect(again.status).toBe(304);
    expect(again.headers['x-cache']).toBe('HIT');
    expect(upstreams.chat.requests.length).toBe(calls);
  });
});

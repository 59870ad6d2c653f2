import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { throughGateway } from '../../src/features/search/redirect-urls.js';
import { useUpstreams } from '../helpers/upstreams.js';

const upstreams = useUpstreams();

/** Every URL-valued field of a result list, in document order. */
function urlsOf(body: string): string[] {
  return [...body.matchAll(/"url":"([^"]*)"/g)].map((m) => m[1]!);
}

describe('result links through the gateway (SEARCH_LINKS=gateway)', () => {
  it.each([
    [
      'https://search.test/v1/url?pid=1&rp=3&u=x%2By+z#frag',
      '/api/search/url?pid=1&rp=3&u=x%2By+z#frag',
    ],
    ['https://search.test/v1/url', '/api/search/url'],
    [
      'https://search.test/v1/url#only-fragment?not-a-query',
      '/api/search/url#only-fragment?not-a-query',
    ],
    ['https://search.test/v1/url?a=1?b=2', '/api/search/url?a=1?b=2'],
  ])('when %s goes through the gateway, then it becomes %s', (url, expected) => {
    expect(throughGateway(url, '/api/search/url')).toBe(expected);
  });

  it.each(['relevance', 'price_asc', 'rating'])(
    'when results are sorted by %s, then every redirect link is the gateway route with the same query bytes the upstream mode sends',
    async (sort) => {
      const upstreamMode = await upstreams.gateway();
      const gatewayMode = await upstreams.gateway({ env: { SEARCH_LINKS: 'gateway' } });
      const path = `/api/search?q=headphones&k=8&sort=${sort}`;
      const a = await request(upstreamMode.app).get(path).expect(200);
      const b = await request(gatewayMode.app).get(path).expect(200);
      const origin = upstreams.search.origin;
      const expected = urlsOf(a.text).map((url) =>
        url.startsWith(`${origin}/v1/url`)
          ? url.replace(`${origin}/v1/url`, '/api/search/url')
          : url,
      );
      expect(urlsOf(b.text)).toEqual(expected);
      expect(urlsOf(b.text).some((url) => url.startsWith('/api/search/url?'))).toBe(true);
      expect(b.text).not.toContain(`${origin}/v1/url`);
    },
  );

  it('when a rewritten link is followed, then the gateway proxies it and the search service records the reranked position', async () => {
    const gw = await upstreams.gateway({ env: { SEARCH_LINKS: 'gateway' } });
    const res = await request(gw.app)
      .get('/api/search?q=headphones&k=8&sort=price_desc')
      .expect(200);
    const first = (
      res.body as { itemListElement: { offers: { url?: string; offers?: { url: string }[] } }[] }
    ).itemListElement[0]!;
    const link = first.offers.url ?? first.offers.offers![0]!.url;
    expect(link.startsWith('/api/search/url?')).toBe(true);
    const rp = new URLSearchParams(link.split('?')[1]).get('rp');
    const followed = await request(gw.app).get(link).redirects(0);
    expect(followed.status).toBe(302);
    expect(followed.headers['location']).toMatch(/^https?:\/\//);
    expect(String(upstreams.search.clicks.at(-1)?.rp)).toBe(rp);
  });
});

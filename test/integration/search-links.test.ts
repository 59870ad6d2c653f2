import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createLinkSigner } from '../../src/features/search/link-signature.js';
import { throughGateway } from '../../src/features/search/redirect-urls.js';
import { rawRequest } from '../helpers/raw-request.js';
import { CURSOR_SECRET, type TestGateway } from '../helpers/test-gateway.js';
import { useUpstreams } from '../helpers/upstreams.js';

const upstreams = useUpstreams();

/** Every URL-valued field of a result list, in document order. */
function urlsOf(body: string): string[] {
  return [...body.matchAll(/"url":"([^"]*)"/g)].map((m) => m[1]!);
}

/** The links a result list holds to the gateway's redirect route. */
const gatewayLinksOf = (body: string) =>
  urlsOf(body).filter((url) => url.startsWith('/api/search/url'));

/** A signed link split into the query it stands for and its signature (the last parameter). */
function unsign(link: string): { query: string; sig: string } {
  const match = /^\/api\/search\/url\?(?:(.*)&)?sig=([\w-]{22})$/.exec(link);
  expect(match, `${link} ends with a 22-character sig`).not.toBeNull();
  return { query: match![1] ?? '', sig: match![2]! };
}

/**
 * Follows each link as a browser would: a 302 passing the search service's Location through,
 * and the search service asked for exactly the link's query without its `sig`.
 */
async function followAll(gw: TestGateway, links: readonly string[]): Promise<void> {
  for (const link of links) {
    const res = await rawRequest(gw.app, { path: link });
    expect(res.status, `${link} -> ${res.body}`).toBe(302);
    expect(res.headers.location).toMatch(/^https?:\/\//);
    expect(upstreams.search.requests.at(-1)?.url).toBe(`/v1/url?${unsign(link).query}`);
  }
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

  it.each([
    [
      '/api/search/url?pid=1&rp=3&u=x%2By+z#frag',
      '/api/search/url?pid=1&rp=3&u=x%2By+z&sig=',
      '#frag',
    ],
    ['/api/search/url', '/api/search/url?sig=', ''],
    [
      '/api/search/url#only-fragment?not-a-query',
      '/api/search/url?sig=',
      '#only-fragment?not-a-query',
    ],
    ['/api/search/url?a=1?b=2', '/api/search/url?a=1?b=2&sig=', ''],
    ['/api/search/url?a=1&', '/api/search/url?a=1&&sig=', ''],
  ])(
    'when %s is signed, then sig ends its query, before any fragment, and the query verifies',
    (link, head, fragment) => {
      const signer = createLinkSigner({ secret: CURSOR_SECRET });
      const signed = signer.sign(link);
      const target = signed.slice(0, signed.length - fragment.length);
      expect(signed.endsWith(fragment)).toBe(true);
      expect(target.startsWith(head)).toBe(true);
      expect(target.slice(head.length)).toMatch(/^[\w-]{22}$/);
      const query = link.split('#')[0]!.split('?').slice(1).join('?');
      expect(signer.verify(target.slice(target.indexOf('?') + 1))).toBe(query);
    },
  );

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
      // Each gateway link is the expected one byte for byte, then `&sig=` and the signature.
      const got = urlsOf(b.text);
      expect(got).toHaveLength(expected.length);
      got.forEach((url, i) => {
        const want = expected[i]!;
        if (want.startsWith('/api/search/url?')) expect(url).toBe(`${want}&sig=${unsign(url).sig}`);
        else expect(url).toBe(want);
      });
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
    expect(upstreams.search.requests.at(-1)?.url).toBe(`/v1/url?${unsign(link).query}`);
  });
});

describe('signed result links (SEARCH_LINKS=gateway, contract section 5)', () => {
  it.each(['relevance', 'price_asc', 'rating'])(
    'when results sorted by %s and their next page are served, then every gateway link ends with a sig that the gateway follows, and the search service gets the query without it',
    async (sort) => {
      const gw = await upstreams.gateway({ env: { SEARCH_LINKS: 'gateway' } });
      const first = await request(gw.app).get(`/api/search?q=headphones&k=5&sort=${sort}`);
      expect(first.status).toBe(200);
      const next = (first.body as { next?: string }).next;
      expect(next).toMatch(/^\/api\/search\?cursor=/);
      const second = await request(gw.app).get(next!).expect(200);
      for (const page of [first.text, second.text]) {
        const links = gatewayLinksOf(page);
        expect(links.length).toBeGreaterThan(5);
        for (const link of links) unsign(link);
        await followAll(gw, links);
      }
      // The positions on page two keep the upstream's numbering, and were signed as rewritten.
      const rps = gatewayLinksOf(second.text).map((l) =>
        new URLSearchParams(unsign(l).query).get('rp'),
      );
      expect(rps.every((rp) => Number(rp) > 5)).toBe(true);
    },
  );

  it('when the list is served from the cache, then its links still carry a valid sig', async () => {
    const gw = await upstreams.gateway({ env: { SEARCH_LINKS: 'gateway' } });
    await request(gw.app).get('/api/search?q=lamp&k=3&sort=price_desc').expect(200);
    await gw.loader.settled();
    const hit = await request(gw.app).get('/api/search?q=lamp&k=3&sort=price_desc').expect(200);
    expect(hit.headers['x-cache']).toBe('HIT');
    await followAll(gw, gatewayLinksOf(hit.text));
  });

  it('when a link from one gateway is followed on another, then it works with the same CURSOR_SECRET and is 400 INVALID_LINK with another one', async () => {
    const issuer = await upstreams.gateway({ env: { SEARCH_LINKS: 'gateway' } });
    const twin = await upstreams.gateway({ env: { SEARCH_LINKS: 'gateway' } });
    const stranger = await upstreams.gateway({
      env: { SEARCH_LINKS: 'gateway', CURSOR_SECRET: 'another-cursor-secret-0123456789abcdef' },
    });
    const res = await request(issuer.app).get('/api/search?q=coffee&k=3&sort=rating').expect(200);
    const links = gatewayLinksOf(res.text);
    expect(links.length).toBeGreaterThan(0);
    await followAll(twin, links);

    upstreams.search.requests.length = 0;
    for (const link of links) {
      const refused = await rawRequest(stranger.app, { path: link });
      expect(refused.status).toBe(400);
      expect(JSON.parse(refused.body)).toMatchObject({ code: 'INVALID_LINK', source: 'gateway' });
    }
    expect(upstreams.search.requests).toHaveLength(0);
  });

  it('when a gateway link is tampered with, then it is 400 INVALID_LINK and the search service is not called', async () => {
    const gw = await upstreams.gateway({ env: { SEARCH_LINKS: 'gateway' } });
    const res = await request(gw.app).get('/api/search?q=headphones&k=3&sort=price_asc');
    const link = gatewayLinksOf(res.text)[0]!;
    const { query, sig } = unsign(link);
    const tampered = [
      `/api/search/url?${query.replace(/rp=\d+/, 'rp=99')}&sig=${sig}`,
      `/api/search/url?${query}`,
      `/api/search/url?sig=${sig}&${query}`,
      `${link}&sig=${sig}`,
      `${link}&kind=offer`,
      '/api/search/url?u=https://evil.example/',
    ];
    upstreams.search.requests.length = 0;
    for (const path of tampered) {
      const refused = await rawRequest(gw.app, { path });
      expect(refused.status, path).toBe(400);
      expect(JSON.parse(refused.body)).toMatchObject({ code: 'INVALID_LINK' });
    }
    expect(upstreams.search.requests).toHaveLength(0);
  });

  it('when links stay with the search service (SEARCH_LINKS=upstream), then they carry no sig and the route passes any query through', async () => {
    const gw = await upstreams.gateway();
    const res = await request(gw.app).get('/api/search?q=headphones&k=3').expect(200);
    expect(res.text).not.toContain('sig=');
    const followed = await rawRequest(gw.app, {
      path: '/api/search/url?u=https%3A%2F%2Fshop.example%2F&rp=1',
    });
    expect(followed.status).toBe(302);
    expect(upstreams.search.requests.at(-1)?.url).toBe(
      '/v1/url?u=https%3A%2F%2Fshop.example%2F&rp=1',
    );
  });
});

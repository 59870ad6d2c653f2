import request from 'supertest';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createSearchSimulator,
  type SearchSimulator,
} from '../../simulators/search/search-simulator.js';
import {
  CURSOR_SECRET,
  SEARCH_TOKEN,
  createTestGateway,
  type TestGateway,
} from '../helpers/test-gateway.js';

interface Offerish {
  url: string;
  seller: { url?: string };
  price?: string;
  priceCurrency?: string;
  category?: { url?: string }[];
}
interface Productish {
  name: string;
  brand?: { url?: string };
  offers: Offerish & { offers?: Offerish[]; lowPrice?: string };
}
interface Listish {
  itemListElement: Productish[];
  itemScore: number[];
  next?: string;
  '@context'?: string;
}

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
  gw = await createTestGateway({ searchOrigin: sim.origin });
});
afterEach(() => gw.close());

/** Every redirect URL of a product, in a fixed order. */
function redirectUrls(product: Productish): string[] {
  const offers = product.offers.offers ?? [product.offers];
  return [
    ...offers.flatMap((o) => [o.url, o.seller.url, ...(o.category ?? []).map((c) => c.url)]),
    product.brand?.url,
  ].filter((url): url is string => url !== undefined && url.startsWith(`${sim.origin}/v1/url?`));
}
const rpOf = (url: string) => new URL(url).searchParams.getAll('rp');
const withoutRp = (url: string) => url.replace(/([?&])rp=[^&#]*/g, '$1rp=');

describe('GET /api/search', () => {
  it('when a query is sent, then the upstream gets the token, the request id and the + encoded query', async () => {
    const res = await request(gw.app)
      .get('/api/search?q=wireless%20headphones&k=5&tracking=ignored')
      .set('X-Request-Id', 'req-abc.123')
      .set('Cookie', 'session=browser-cookie');
    expect(res.status).toBe(200);
    expect(res.headers['x-request-id']).toBe('req-abc.123');
    expect(res.headers['x-cache']).toBe('MISS');
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(sim.requests).toHaveLength(1);
    const upstream = sim.requests[0]!;
    expect(upstream.url).toBe('/v1/search?q=wireless+headphones&k=5');
    expect(upstream.headers['service-client-token']).toBe(SEARCH_TOKEN);
    expect(upstream.headers['x-request-id']).toBe('req-abc.123');
    expect(upstream.headers.cookie).toBeUndefined();
    expect((res.body as Listish).itemListElement).toHaveLength(5);
  });

  it('when sorting by price, then items are reordered with their scores and every rp keeps the upstream numbering', async () => {
    const upstream = (await request(gw.app).get('/api/search?q=headphones&k=10')).body as Listish;
    const res = await request(gw.app).get('/api/search?q=headphones&k=10&sort=price_asc');
    expect(res.status).toBe(200);
    const sorted = res.body as Listish;

    const original = new Map(
      upstream.itemListElement.map((p, i) => [p.name + redirectUrls(p).map(withoutRp).join(), i]),
    );
    sorted.itemListElement.forEach((product, position) => {
      const from = original.get(product.name + redirectUrls(product).map(withoutRp).join());
      expect(from).toBeDefined();
      expect(sorted.itemScore[position]).toBe(upstream.itemScore[from!]);
      // every redirect URL of the product now at `position` carries that position's upstream rp
      const expectedRp = rpOf(redirectUrls(upstream.itemListElement[position]!)[0]!)[0];
      for (const url of redirectUrls(product)) expect(rpOf(url)).toEqual([expectedRp]);
      // and nothing else in those URLs changed
      expect(redirectUrls(product).map(withoutRp)).toEqual(
        redirectUrls(upstream.itemListElement[from!]!).map(withoutRp),
      );
    });
    const prices = sorted.itemListElement
      .map((p) => p.offers.lowPrice ?? p.offers.price)
      .filter((price): price is string => price !== undefined);
    expect(prices.length).toBeGreaterThan(1);
    expect(sorted.itemListElement.map((p) => p.name)).not.toEqual(
      upstream.itemListElement.map((p) => p.name),
    );
  });

  it('when a reranked result link is clicked through the upstream, then it reports the new position', async () => {
    const sorted = (await request(gw.app).get('/api/search?q=coffee&k=10&sort=rating'))
      .body as Listish;
    const third = redirectUrls(sorted.itemListElement[2]!)[0]!;
    const click = await fetch(third, { redirect: 'manual' });
    expect(click.status).toBe(302);
    expect(sim.clicks.at(-1)?.rp).toBe(3);
  });

  it('when LD-JSON is accepted, then the upstream is asked for it and it is sent as application/ld+json', async () => {
    const res = await request(gw.app)
      .get('/api/search?q=laptop&k=2')
      .set('Accept', 'application/ld+json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/ld+json; charset=utf-8');
    expect(res.headers.vary).toContain('Accept');
    expect(sim.requests[0]!.headers.accept).toBe('application/ld+json');
    expect((JSON.parse(res.text) as Listish)['@context']).toBe('https://schema.org');
  });

  it('when the Accept header allows neither JSON form, then it is 406 with no upstream call', async () => {
    const res = await request(gw.app).get('/api/search?q=laptop').set('Accept', 'image/png');
    expect(res.status).toBe(406);
    expect(res.body).toMatchObject({ code: 'NOT_ACCEPTABLE', source: 'gateway' });
    expect(sim.requests).toHaveLength(0);
  });

  it.each([
    ['q missing', '', 'q is required'],
    ['q empty', 'q=', 'q must not be empty'],
    ['q only spaces', 'q=%20%20', 'q must not be empty'],
    ['q repeated', 'q=a&q=b', 'q must be given once'],
    ['q too long', `q=${'x'.repeat(501)}`, 'q must be at most 500 characters'],
    ['k zero', 'q=a&k=0', 'k must be a whole number from 1 to 10'],
    ['k above the maximum', 'q=a&k=11', 'k must be a whole number from 1 to 10'],
    ['k negative', 'q=a&k=-1', 'k must be a whole number from 1 to 10'],
    ['k with a sign', 'q=a&k=%2B5', 'k must be a whole number from 1 to 10'],
    ['k a fraction', 'q=a&k=2.5', 'k must be a whole number from 1 to 10'],
    ['k an exponent', 'q=a&k=1e1', 'k must be a whole number from 1 to 10'],
    ['k hex', 'q=a&k=0x5', 'k must be a whole number from 1 to 10'],
    ['k repeated', 'q=a&k=1&k=2', 'k must be given once'],
    [
      'sort unknown',
      'q=a&sort=cheapest',
      'sort must be one of relevance, price_asc, price_desc, rating',
    ],
    ['cursor with q', 'q=a&cursor=abc', 'q cannot be combined with cursor'],
  ])(
    'when %s, then it is 400 with a precise message and no upstream call',
    async (_name, query, message) => {
      const res = await request(gw.app).get(`/api/search?${query}`);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(res.body).toMatchObject({
        status: 400,
        code: 'VALIDATION_FAILED',
        source: 'gateway',
        title: 'Bad Request',
      });
      expect(
        (res.body as { errors: { message: string }[] }).errors.map((e) => e.message),
      ).toContain(message);
      expect((res.body as { detail: string }).detail).toContain(message);
      expect((res.body as { requestId: string }).requestId).toBe(res.headers['x-request-id']);
      expect(sim.requests).toHaveLength(0);
    },
  );

  it('when k is absent, then the configured maximum is used', async () => {
    await request(gw.app).get('/api/search?q=shoes').expect(200);
    expect(sim.requests[0]!.url).toBe('/v1/search?q=shoes&k=10');
  });

  it('when the same query differs only in whitespace, then it shares one cache entry and one upstream call', async () => {
    await request(gw.app).get('/api/search?q=wireless+headphones&k=3').expect(200);
    const res = await request(gw.app).get('/api/search?q=%20wireless%20%20%20headphones%20&k=3');
    expect(res.headers['x-cache']).toBe('HIT');
    expect(sim.requests).toHaveLength(1);
  });
});

describe('paging with cursors', () => {
  it('when a page has a next link, then it is a gateway URL whose cursor fetches the next page with the same sort', async () => {
    const first = await request(gw.app).get('/api/search?q=headphones&k=10&sort=price_desc');
    const next = (first.body as Listish).next!;
    expect(next).toMatch(/^\/api\/search\?cursor=[\w-]+\.[\w-]+$/);
    expect(next).not.toContain(sim.origin);

    const second = await request(gw.app).get(next);
    expect(second.status).toBe(200);
    expect(sim.requests[1]!.url).toBe('/v1/search?q=headphones&k=10&start=10');
    const page2 = second.body as Listish;
    // positions keep the upstream's numbering: page two is 11..20 whatever the order
    const rps = page2.itemListElement.map((p) => Number(rpOf(redirectUrls(p)[0]!)[0]));
    expect(rps).toEqual([11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
    const prices = page2.itemListElement.map((p) => p.offers.lowPrice ?? p.offers.price);
    expect(prices[0]).toBeDefined();
  });

  it.each([
    ['garbage', 'not-a-cursor'],
    [
      'a cursor with a forged signature',
      `${Buffer.from('{"v":1,"o":"http://evil.test","q":"q=a","s":"relevance"}').toString('base64url')}.AAAA`,
    ],
    ['a cursor signed for another host', 'other-host'],
  ])('when the cursor is %s, then it is 400 and no connection is made', async (_name, cursor) => {
    let value = cursor;
    if (cursor === 'other-host') {
      const { createCursorCodec } = await import('../../src/features/search/search-cursor.js');
      value = createCursorCodec({
        secret: CURSOR_SECRET,
        searchBaseUrl: 'http://evil.test',
      }).encode('http://evil.test/v1/search?q=a', 'relevance')!;
    }
    const res = await request(gw.app).get(`/api/search?cursor=${encodeURIComponent(value)}`);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'INVALID_CURSOR', source: 'gateway' });
    expect(sim.requests).toHaveLength(0);
  });
});

describe('secrets', () => {
  it('when requests succeed and fail, then the client token appears in no response and no log line', async () => {
    const responses = [
      await request(gw.app).get('/api/search?q=headphones&k=3&sort=rating'),
      await request(gw.app).get('/api/search?q='),
      await request(gw.app).get('/api/search?cursor=x'),
    ];
    sim.faults.add({ fault: { kind: 'status', status: 401 }, times: 1 });
    responses.push(await request(gw.app).get('/api/search?q=laptop'));
    sim.faults.add({ fault: { kind: 'reset' }, times: 1 });
    responses.push(await request(gw.app).get('/api/search?q=coffee'));
    for (const res of responses) {
      expect(res.text).not.toContain(SEARCH_TOKEN);
      expect(JSON.stringify(res.headers)).not.toContain(SEARCH_TOKEN);
    }
    expect(gw.logs.text()).not.toContain(SEARCH_TOKEN);
    expect(gw.logs.text()).not.toContain(CURSOR_SECRET);
    expect(gw.logs.lines().length).toBeGreaterThan(4);
  });
});

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createSearchSimulator,
  type SearchSimulator,
} from '../../simulators/search/search-simulator.js';
import type {
  ResultList,
  ResultOffer,
  ResultProduct,
} from '../../simulators/search/search-types.js';

// Checks the simulator against search-service-api.md over real HTTP, never against a client.

const TOKEN = 'test-client-token';
const DECIMALS: Record<string, number> = { EUR: 2, USD: 2, GBP: 2, JPY: 0, KWD: 3 };
/** Matches products of every category, so one request sees the whole catalogue. */
const EVERYTHING = 'headphones coffee shoes laptops books knives smartphones backpacks lamps games';

let sim: SearchSimulator;
const extra: SearchSimulator[] = [];

beforeAll(async () => {
  sim = createSearchSimulator({ clientToken: TOKEN, seed: 7 });
  await sim.listen();
});
afterEach(async () => {
  sim.faults.clear();
  await Promise.all(extra.splice(0).map((server) => server.close()));
});
afterAll(() => sim.close());

async function startExtra(seed: number): Promise<SearchSimulator> {
  const server = createSearchSimulator({ clientToken: TOKEN, seed });
  extra.push(server);
  await server.listen();
  return server;
}

function get(url: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { headers, redirect: 'manual' });
}

function searchUrl(origin: string, params: Record<string, string>): string {
  return `${origin}/v1/search?${new URLSearchParams(params).toString()}`;
}

async function search(
  params: Record<string, string>,
  headers: Record<string, string> = {},
  server: SearchSimulator = sim,
): Promise<ResultList> {
  const res = await get(searchUrl(server.origin, params), {
    'service-client-token': TOKEN,
    ...headers,
  });
  expect(res.status).toBe(200);
  return (await res.json()) as ResultList;
}

function offersOf(product: ResultProduct): ResultOffer[] {
  return product.offers['@type'] === 'AggregateOffer' ? product.offers.offers : [product.offers];
}

/** Every redirect link of a product: offers, sellers, categories and brand. */
function linksOf(product: ResultProduct): string[] {
  const links = offersOf(product).flatMap((offer) => [
    offer.url,
    ...(offer.seller.url === undefined ? [] : [offer.seller.url]),
    ...(offer.category ?? []).flatMap((node) => (node.url === undefined ? [] : [node.url])),
  ]);
  if (product.brand?.url !== undefined) links.push(product.brand.url);
  return links;
}

const paramsOf = (link: string): URLSearchParams => new URL(link).searchParams;

describe('authentication', () => {
  it('when a search has no or a wrong client token, then it answers 401 with a JSON error', async () => {
    for (const headers of [{}, { 'service-client-token': 'wrong' }]) {
      const res = await get(searchUrl(sim.origin, { q: 'coffee' }), headers);
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(await res.json()).toEqual({ error: expect.any(String) as unknown });
    }
  });

  it('when status is asked with the token, then 204 with no body; without it, then 401', async () => {
    const ok = await get(`${sim.origin}/v1/status`, { 'service-client-token': TOKEN });
    expect(ok.status).toBe(204);
    expect(await ok.text()).toBe('');
    const denied = await get(`${sim.origin}/v1/status`);
    expect(denied.status).toBe(401);
  });
});

describe('search', () => {
  it('when q is missing or blank or k is not a positive integer, then it answers 400', async () => {
    for (const params of [{}, { q: '' }, { q: '  ' }, { q: 'a', k: '0' }, { q: 'a', k: 'ten' }]) {
      const res = await get(searchUrl(sim.origin, params), { 'service-client-token': TOKEN });
      expect(res.status, JSON.stringify(params)).toBe(400);
      expect(await res.json()).toEqual({ error: expect.any(String) as unknown });
    }
  });

  it('when k is given, then at most k items come back with parallel, descending scores', async () => {
    const res = await get(searchUrl(sim.origin, { q: 'headphones', k: '7' }), {
      'service-client-token': TOKEN,
    });
    const text = await res.text();
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(Number(res.headers.get('content-length'))).toBe(Buffer.byteLength(text));
    const body = JSON.parse(text) as ResultList;
    expect(body.itemListElement).toHaveLength(7);
    expect(body.itemScore).toHaveLength(7);
    expect([...body.itemScore].sort((a, b) => b - a)).toEqual(body.itemScore);
    expect(Number.isInteger(body.queryDuration)).toBe(true);
    expect((await search({ q: 'headphones' })).itemListElement).toHaveLength(10);
  });

  it('when q is sent with + for spaces, then it is read as words', async () => {
    const res = await get(`${sim.origin}/v1/search?q=wireless+headphones&k=1000`, {
      'service-client-token': TOKEN,
    });
    const body = (await res.json()) as ResultList;
    expect(body.itemListElement.length).toBe(sim.catalogue.search('wireless headphones').length);
    expect(body.itemListElement[0]?.name).toMatch(/wireless/i);
  });

  it('when results span pages, then next walks them all and rp counts across pages', async () => {
    const total = sim.catalogue.search('wireless headphones').length;
    expect(total).toBeGreaterThan(25);
    let url: string | undefined = searchUrl(sim.origin, { q: 'wireless headphones', k: '10' });
    const seen: string[] = [];
    const firstRps: string[] = [];
    let pages = 0;
    while (url !== undefined) {
      if (pages > 0) expect(url).toMatch(/[?&]q=wireless\+headphones(&|$)/);
      const res = await get(url, { 'service-client-token': TOKEN });
      const body = (await res.json()) as ResultList;
      for (const product of body.itemListElement) {
        // All links of one product carry the same absolute, 1-based position.
        const rps = [...new Set(linksOf(product).map((link) => paramsOf(link).get('rp')))];
        expect(rps).toEqual([String(seen.length + 1)]);
        if (product === body.itemListElement[0]) firstRps.push(rps[0]!);
        seen.push(paramsOf(offersOf(product)[0]!.url).get('pid')!);
      }
      url = body.next;
      pages += 1;
    }
    expect(pages).toBe(Math.ceil(total / 10));
    expect(firstRps.slice(0, 3)).toEqual(['1', '11', '21']);
    expect(new Set(seen).size).toBe(total);
  });

  it('when plain JSON is asked, then products and offers carry @type only and short enums', async () => {
    const body = await search({ q: EVERYTHING, k: '1000' });
    expect(body).not.toHaveProperty('@context');
    const offers = body.itemListElement.flatMap((product) => {
      expect(product['@type']).toBe('Product');
      expect(product).not.toHaveProperty('@context');
      expect(['Offer', 'AggregateOffer']).toContain(product.offers['@type']);
      return offersOf(product);
    });
    expect(offers.some((offer) => offer.availability === 'InStock')).toBe(true);
    for (const offer of offers) {
      expect(offer['@type']).toBe('Offer');
      expect(offer.availability ?? '').not.toMatch(/^https:/);
    }
    // Some targets are shown by name only in the minimal JSON form (section 2.8).
    expect(offers.some((offer) => offer.seller.url === undefined)).toBe(true);
  });

  it('when LD-JSON is asked, then root and products carry @context/@type and enums are URLs', async () => {
    const res = await get(searchUrl(sim.origin, { q: EVERYTHING, k: '1000' }), {
      'service-client-token': TOKEN,
      accept: 'application/ld+json',
    });
    expect(res.headers.get('content-type')).toBe('application/ld+json');
    const body = (await res.json()) as ResultList;
    expect(body['@context']).toBe('https://schema.org');
    expect(body['@type']).toBe('ItemList');
    const offers = body.itemListElement.flatMap((product) => {
      expect(product['@context']).toBe('https://schema.org');
      expect(product['@type']).toBe('Product');
      return offersOf(product);
    });
    expect(offers.some((offer) => offer.availability === 'https://schema.org/InStock')).toBe(true);
    for (const offer of offers) {
      expect(offer.availability ?? 'https://schema.org/Absent').toMatch(
        /^https:\/\/schema\.org\/\w+$/,
      );
      expect(offer.itemCondition ?? 'https://schema.org/Absent').toMatch(
        /^https:\/\/schema\.org\/\w+$/,
      );
      expect(offer.seller.url).toBeDefined();
    }
  });
});

describe('result content', () => {
  let all: ResultProduct[];
  beforeAll(async () => {
    all = (await search({ q: EVERYTHING, k: '1000' })).itemListElement;
  });

  it('when the whole catalogue is listed, then every category term finds products', () => {
    expect(all).toHaveLength(sim.catalogue.products.length);
    for (const q of ['headphones', 'coffee', 'shoes', 'laptop']) {
      expect(sim.catalogue.search(q).length, q).toBeGreaterThan(20);
    }
  });

  it('when an offer has a price, then it has a currency and exactly its decimals', () => {
    const priced = all.flatMap(offersOf).filter((offer) => offer.price !== undefined);
    expect(new Set(priced.map((offer) => offer.priceCurrency))).toEqual(
      new Set(Object.keys(DECIMALS)),
    );
    for (const { price, priceCurrency } of priced) {
      const decimals = DECIMALS[priceCurrency ?? ''];
      expect(decimals, priceCurrency).toBeDefined();
      const shape = decimals === 0 ? /^\d+$/ : new RegExp(`^\\d+\\.\\d{${decimals}}$`);
      expect(price).toMatch(shape);
    }
    expect(all.flatMap(offersOf).some((offer) => offer.price === undefined)).toBe(true);
  });

  it('when offers aggregate, then high/low/currency appear only for one well-formed currency', () => {
    const aggregates = all.flatMap((product) =>
      product.offers['@type'] === 'AggregateOffer' ? [product.offers] : [],
    );
    let withPrices = 0;
    let mixed = 0;
    for (const aggregate of aggregates) {
      expect(aggregate.offers.length).toBeGreaterThan(1);
      const currencies = new Set(aggregate.offers.map((offer) => offer.priceCurrency));
      const uniform = currencies.size === 1 && aggregate.offers.every((offer) => offer.price);
      if (!uniform) {
        expect(aggregate).not.toHaveProperty('highPrice');
        expect(aggregate).not.toHaveProperty('lowPrice');
        expect(aggregate).not.toHaveProperty('priceCurrency');
        if (currencies.size > 1 && !currencies.has(undefined)) mixed += 1;
        continue;
      }
      withPrices += 1;
      const values = aggregate.offers.map((offer) => Number(offer.price));
      expect(aggregate.priceCurrency).toBe(aggregate.offers[0]!.priceCurrency);
      expect(Number(aggregate.highPrice)).toBe(Math.max(...values));
      expect(Number(aggregate.lowPrice)).toBe(Math.min(...values));
    }
    expect(withPrices).toBeGreaterThan(10);
    expect(mixed).toBeGreaterThan(5);
    // Several offers from one seller, e.g. new and used (section 2.6).
    expect(
      aggregates.some(
        (aggregate) => new Set(aggregate.offers.map((offer) => offer.seller.name)).size === 1,
      ),
    ).toBe(true);
  });

  it('when a result links out, then it goes through /v1/url with tracking parameters', () => {
    const orders = new Set<string>();
    for (const product of all) {
      const pids = new Set<string | null>();
      for (const link of linksOf(product)) {
        expect(link.startsWith(`${sim.origin}/v1/url?`)).toBe(true);
        const params = paramsOf(link);
        for (const name of ['pid', 'sid', 'rp', 'kind', 'u']) expect(params.get(name)).toBeTruthy();
        expect(params.get('u')).toMatch(/^https:\/\/[^/]*\.example\//);
        orders.add([...params.keys()].join(','));
        pids.add(params.get('pid'));
      }
      expect(pids.size).toBe(1);
    }
    // Consumers must not depend on parameter order.
    expect(orders.size).toBeGreaterThan(1);
  });

  it('when images are present, then they are on the image host at 512/256, logos at 192/96', () => {
    const images = all.flatMap((product) => (product.image ? [product.image] : []));
    expect(images.length).toBeGreaterThan(all.length / 2);
    for (const image of images) {
      expect(image.url).toMatch(/^https:\/\/img\.example\.test\/.*512/);
      expect(image.thumbnail).toMatch(/^https:\/\/img\.example\.test\/.*256/);
    }
    const logos = all.flatMap(offersOf).flatMap((offer) => offer.seller.logo ?? []);
    expect(logos.length).toBeGreaterThan(0);
    for (const logo of logos) {
      expect(logo.url).toMatch(/\/192\.\w+$/);
      expect(logo.thumbnail).toMatch(/\/96\.\w+$/);
    }
  });

  it('when ratings are present, then ratingValue is within 1..5 and ratingCount an integer', () => {
    const ratings = all.flatMap((product) => product.aggregateRating ?? []);
    expect(ratings.length).toBeGreaterThan(all.length / 2);
    expect(ratings.length).toBeLessThan(all.length);
    for (const { ratingValue, ratingCount } of ratings) {
      expect(ratingValue).toBeGreaterThanOrEqual(1);
      expect(ratingValue).toBeLessThanOrEqual(5);
      expect(Number.isInteger(ratingCount)).toBe(true);
    }
  });
});

describe('redirect', () => {
  it('when a result link is followed, then 302 to the target with Connection: close', async () => {
    const [product] = (await search({ q: 'coffee maker', k: '3', start: '10' })).itemListElement;
    const link = offersOf(product!)[0]!.url;
    const params = paramsOf(link);
    const res = await get(link);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(params.get('u'));
    expect(res.headers.get('connection')).toBe('close');
    expect(await res.text()).toBe('');
    expect(sim.clicks.at(-1)).toMatchObject({ pid: params.get('pid'), rp: 11, kind: 'offer' });
  });

  it('when the front end rewrites rp, then the click records the new position', async () => {
    const [product] = (await search({ q: 'laptop', k: '1' })).itemListElement;
    const url = new URL(offersOf(product!)[0]!.url);
    url.searchParams.set('rp', '4');
    expect((await get(url.href)).status).toBe(302);
    expect(sim.clicks.at(-1)?.rp).toBe(4);
  });

  it('when u is missing or not http(s), then it answers 400', async () => {
    for (const query of ['pid=x', 'u=javascript%3Aalert(1)', 'u=not-a-url']) {
      expect((await get(`${sim.origin}/v1/url?${query}`)).status, query).toBe(400);
    }
  });
});

describe('service behaviour', () => {
  it('when two simulators share a seed, then their answers are identical', async () => {
    const [a, b, c] = await Promise.all([startExtra(42), startExtra(42), startExtra(43)]);
    const answer = async (server: SearchSimulator) => {
      const body = await search({ q: 'shoes', k: '20' }, {}, server);
      return JSON.stringify({ ...body, queryDuration: 0 }).replaceAll(server.origin, 'ORIGIN');
    };
    expect(await answer(a)).toBe(await answer(b));
    expect(await answer(a)).not.toBe(await answer(c));
  });

  it('when two simulators in one process link to the same origin, then each answers from its own catalogue', async () => {
    // As a simulator that gets the port an earlier one in the same test worker had: the same
    // origin in every link, another image host.
    const publicOrigin = 'http://127.0.0.1:1';
    const started = ['https://images-a.test', 'https://images-b.test'].map((imageHost) => {
      const server = createSearchSimulator({ clientToken: TOKEN, publicOrigin, imageHost });
      extra.push(server);
      return server;
    });
    await Promise.all(started.map((server) => server.listen()));
    for (const [server, host] of [
      [started[0]!, 'https://images-a.test/'],
      [started[1]!, 'https://images-b.test/'],
    ] as const) {
      const body = await search({ q: 'wireless headphones', k: '10' }, {}, server);
      const images = body.itemListElement.flatMap((p) => (p.image ? [p.image.url] : []));
      expect(images.length).toBeGreaterThan(0);
      for (const url of images) expect(url.startsWith(host), url).toBe(true);
    }
  });

  it('when a 503 fault is switched on, then the next search gets it and the one after recovers', async () => {
    sim.faults.add({ fault: { kind: 'status', status: 503 }, pathPrefix: '/v1/search', times: 1 });
    const url = searchUrl(sim.origin, { q: 'books' });
    expect((await get(url, { 'service-client-token': TOKEN })).status).toBe(503);
    expect((await get(url, { 'service-client-token': TOKEN })).status).toBe(200);
  });

  it('when the path is unknown or the method wrong, then 404 or 405', async () => {
    expect((await get(`${sim.origin}/v1/nothing`)).status).toBe(404);
    const post = await fetch(`${sim.origin}/v1/search?q=x`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET');
  });
});

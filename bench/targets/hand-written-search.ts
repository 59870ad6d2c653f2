import { createHash, createHmac } from 'node:crypto';
import express from 'express';
import { Redis } from 'ioredis';
import { Pool } from 'undici';
import { z } from 'zod';

/*
 * The peer of the gateway's search miss (issue 34): `GET /api/search` as a team would write it
 * by hand with the design card's packages (Express 5, ioredis, zod, undici), doing the data work
 * contract sections 2, 4 and 5 ask of a miss and nothing else: validate q/k/sort, Redis GET, the
 * upstream call, JSON.parse, the list checked by a schema written from the search document,
 * rerank, the `rp` rewrite, a signed `next` cursor, JSON.stringify, a strong ETag, Redis SET with
 * an expiry, send. No logging, metrics, tracing, rate limit, single flight, breakers, stale
 * windows or compression: those are what the gateway adds, and what the ratio prices.
 * Usage: hand-written-search <port> <redis url> <search origin> <search token> <key prefix>
 *        <cursor secret>
 */

const [portText, redisUrl, searchOrigin, token, prefix, cursorSecret] = process.argv.slice(2);
const MAX_K = 10;
const TTL_SECONDS = 60;

// The search document's ResultList (section 2), the fields the route reads; the rest pass.
const Image = z.looseObject({ url: z.string(), thumbnail: z.string() });
const Organization = z.looseObject({ name: z.string(), url: z.string().optional() });
const Offer = z.looseObject({
  url: z.string(),
  seller: Organization,
  price: z.string().optional(),
  priceCurrency: z.string().optional(),
  category: z.array(z.looseObject({ name: z.string(), url: z.string().optional() })).optional(),
});
const Offers = z.union([
  z.looseObject({
    offers: z.array(Offer),
    lowPrice: z.string().optional(),
    highPrice: z.string().optional(),
    priceCurrency: z.string().optional(),
  }),
  Offer,
]);
const Product = z.looseObject({
  name: z.string(),
  image: Image.optional(),
  brand: z.looseObject({ name: z.string().optional(), url: z.string().optional() }).optional(),
  offers: Offers,
  aggregateRating: z.looseObject({ ratingValue: z.number(), ratingCount: z.number() }).optional(),
});
const ResultList = z.looseObject({
  itemListElement: z.array(Product),
  itemScore: z.array(z.number()),
  next: z.string().optional(),
  queryDuration: z.number().optional(),
});
type Product = z.infer<typeof Product>;
type Offer = z.infer<typeof Offer>;

/** An AggregateOffer's offers, or the one Offer. */
const offersOf = (p: Product): Offer[] =>
  (p.offers as { offers?: Offer[] }).offers ?? [p.offers as Offer];

const Query = z.object({
  q: z
    .string()
    .transform((q) => q.normalize('NFC').trim().replace(/\s+/gu, ' '))
    .pipe(z.string().min(1).max(500)),
  k: z.coerce.number().int().min(1).max(MAX_K).default(MAX_K),
  sort: z.enum(['relevance', 'price_asc', 'price_desc', 'rating']).default('relevance'),
});

/** The "from" price a shopper sees, with its currency; prices are never converted. */
const priceOf = (p: Product): { currency: string; amount: number } | undefined => {
  const offers = p.offers as { lowPrice?: string; price?: string; priceCurrency?: string };
  const price = offers.lowPrice ?? offers.price;
  if (price === undefined || offers.priceCurrency === undefined || !/^\d+(\.\d+)?$/.test(price)) {
    return undefined;
  }
  return { currency: offers.priceCurrency, amount: Number(price) };
};

/**
 * The items' new order (contract section 5): by rating (ties by count), or by price grouped by
 * currency in order of first appearance; items without the key last, in upstream order.
 */
function order(items: Product[], sort: string): number[] {
  const indices = items.map((_, i) => i);
  if (sort === 'relevance') return indices;
  if (sort === 'rating') {
    const rated = indices.filter((i) => items[i]!.aggregateRating !== undefined);
    rated.sort((a, b) => {
      const ra = items[a]!.aggregateRating!;
      const rb = items[b]!.aggregateRating!;
      return rb.ratingValue - ra.ratingValue || rb.ratingCount - ra.ratingCount;
    });
    return [...rated, ...indices.filter((i) => items[i]!.aggregateRating === undefined)];
  }
  const prices = items.map(priceOf);
  const currencies = [...new Set(prices.flatMap((p) => (p ? [p.currency] : [])))];
  const direction = sort === 'price_asc' ? 1 : -1;
  const priced = indices.filter((i) => prices[i] !== undefined);
  priced.sort((a, b) => {
    const pa = prices[a]!;
    const pb = prices[b]!;
    return (
      currencies.indexOf(pa.currency) - currencies.indexOf(pb.currency) ||
      direction * (pa.amount - pb.amount)
    );
  });
  return [...priced, ...indices.filter((i) => prices[i] === undefined)];
}

/** The product's redirect URLs: offers, nested offers, sellers, brand, categories. */
function urlsOf(p: Product): { get(): string; set(url: string): void }[] {
  const slots: { get(): string; set(url: string): void }[] = [];
  const add = (holder: { url?: string | undefined }) => {
    if (holder.url !== undefined) {
      slots.push({ get: () => holder.url!, set: (url) => (holder.url = url) });
    }
  };
  for (const offer of offersOf(p)) {
    add(offer);
    add(offer.seller);
    for (const category of offer.category ?? []) add(category);
  }
  if (p.brand) add(p.brand);
  return slots;
}

const isRedirect = (url: string) =>
  url.startsWith(`${searchOrigin}/v1/url?`) || url === `${searchOrigin}/v1/url`;
const rpOf = (url: string) => /[?&]rp=([^&#]*)/.exec(url)?.[1];

/** Each position keeps the upstream's `rp` for that position (contract section 5). */
function rewritePositions(before: Product[], after: Product[]): void {
  const rps = before.map((p) =>
    urlsOf(p)
      .map((slot) => slot.get())
      .filter(isRedirect)
      .map(rpOf)
      .find((rp) => rp !== undefined),
  );
  after.forEach((product, position) => {
    const rp = rps[position];
    if (rp === undefined) return;
    for (const slot of urlsOf(product)) {
      const url = slot.get();
      if (isRedirect(url)) slot.set(url.replace(/([?&]rp=)[^&#]*/g, `$1${rp}`));
    }
  });
}

const sign = (payload: string) =>
  createHmac('sha256', cursorSecret!).update(payload).digest('base64url');

const redis = new Redis(redisUrl!);
const search = new Pool(searchOrigin!, { connections: 64 });
const app = express();

app.get('/api/search', async (req, res) => {
  const parsed = Query.safeParse(req.query);
  if (!parsed.success) {
    res.status(400).json({ status: 400, detail: parsed.error.issues[0]?.message });
    return;
  }
  const { q, k, sort } = parsed.data;
  const upstreamQuery = `q=${encodeURIComponent(q).replaceAll('%20', '+')}&k=${k}`;
  const key = `${prefix}hand:${sort}:${createHash('sha256').update(upstreamQuery).digest('base64url')}`;
  const cached = await redis.get(key);
  if (cached !== null) {
    const split = cached.indexOf('\n');
    res
      .set({ ETag: cached.slice(0, split), 'Cache-Control': 'private, no-cache' })
      .type('application/json')
      .send(cached.slice(split + 1));
    return;
  }
  const upstream = await search.request({
    method: 'GET',
    path: `/v1/search?${upstreamQuery}`,
    headers: { 'service-client-token': token!, accept: 'application/json' },
  });
  const list = ResultList.parse(JSON.parse(await upstream.body.text()));
  const permutation = order(list.itemListElement, sort);
  const items = permutation.map((i) => list.itemListElement[i]!);
  if (sort !== 'relevance') rewritePositions(list.itemListElement, items);
  const { next, ...rest } = list;
  const answer = {
    ...rest,
    itemListElement: items,
    itemScore: permutation.map((i) => list.itemScore[i]!),
    ...(next === undefined
      ? {}
      : (() => {
          const payload = Buffer.from(JSON.stringify({ q: next, s: sort })).toString('base64url');
          return { next: `/api/search?cursor=${payload}.${sign(payload)}` };
        })()),
  };
  const body = JSON.stringify(answer);
  const etag = `"${createHash('sha256').update(body).digest('base64url')}"`;
  await redis.set(key, `${etag}\n${body}`, 'EX', TTL_SECONDS);
  res.set({ ETag: etag, 'Cache-Control': 'private, no-cache' }).type('application/json').send(body);
});

process.on('SIGTERM', () => process.exit(0));
app.listen(Number(portText), '127.0.0.1', () => process.send?.({ event: 'listening' }));

import type { RankedProduct } from './search-ranking.js';
import type {
  CatalogueOffer,
  CatalogueProduct,
  CatalogueSeller,
  ResultAggregateOffer,
  ResultBrand,
  ResultList,
  ResultOffer,
  ResultOrganization,
  ResultProduct,
} from './search-types.js';

export type LinkKind = 'offer' | 'seller' | 'brand' | 'category';

export interface RenderOptions {
  /** Origin of the simulator; every result link goes through `${origin}/v1/url`. */
  origin: string;
  /** LD-JSON: @context/@type on root and products, enum values as schema.org URLs. */
  ld: boolean;
  /** Session token carried by every tracking link of one search. */
  sid: string;
}

const SCHEMA = 'https://schema.org';

/**
 * Tracking parameter order differs per kind on purpose: the document only promises the
 * parameters, so consumers must not rely on their order (section 4.2).
 */
const PARAM_ORDER: Record<LinkKind, readonly string[]> = {
  offer: ['pid', 'sid', 'rp', 'kind', 'u'],
  seller: ['rp', 'pid', 'sid', 'kind', 'u'],
  brand: ['kind', 'pid', 'rp', 'sid', 'u'],
  category: ['pid', 'kind', 'u', 'sid', 'rp'],
};

/**
 * Renders one page of ranked products; `start` is the offset of the page in all results and
 * `next` the URL of the following page, when there is one. queryDuration is left for the
 * caller to set once the work is done.
 */
export function renderResultList(
  page: readonly RankedProduct[],
  start: number,
  next: string | undefined,
  options: RenderOptions,
): ResultList {
  const head = options.ld ? ({ '@context': SCHEMA, '@type': 'ItemList' } as const) : {};
  // Keys in the document's order: items, next, scores, duration.
  return {
    ...head,
    itemListElement: page.map(({ product }, index) =>
      renderProduct(product, start + index + 1, options),
    ),
    ...(next === undefined ? {} : { next }),
    itemScore: page.map(({ score }) => score),
    queryDuration: 0,
  };
}

/** Stands for the session token in a cached product: letters and digits, so links keep it as is. */
const SID_MARK = 'SIMSIDMARK7f3a9c';

/**
 * Products as JSON with SID_MARK for the session token: per product object (each simulator
 * makes its own catalogue, so its seed, size and image host are in the object), then by format,
 * origin and position. Keyed by the product's id instead, a simulator that got the port of an
 * earlier one in the same process served that one's products (its images, its seed's offers).
 */
const productJson = new WeakMap<CatalogueProduct, Map<string, string>>();

/**
 * `JSON.stringify(renderResultList(…))` with `queryDuration` set, byte for byte, made from each
 * product's JSON cached per position with the session token put in last: the bench's R4 row sends
 * every search through this simulator on the core it shares with the load generator.
 * `queryDuration` is read once the page is made.
 */
export function renderResultListJson(
  page: readonly RankedProduct[],
  start: number,
  next: string | undefined,
  options: RenderOptions,
  queryDuration: () => number,
): string {
  const sid = formEncode(options.sid);
  const items = page.map(({ product }, index) => {
    const rp = start + index + 1;
    let forms = productJson.get(product);
    if (forms === undefined) {
      forms = new Map();
      productJson.set(product, forms);
    }
    const key = `${options.ld ? 'ld' : 'json'} ${options.origin} ${rp}`;
    let json = forms.get(key);
    if (json === undefined) {
      json = JSON.stringify(renderProduct(product, rp, { ...options, sid: SID_MARK }));
      if (forms.size < 100) forms.set(key, json);
    }
    return json.replaceAll(SID_MARK, sid);
  });
  const head = options.ld ? `"@context":"${SCHEMA}","@type":"ItemList",` : '';
  const nextField = next === undefined ? '' : `"next":${JSON.stringify(next)},`;
  const scores = JSON.stringify(page.map(({ score }) => score));
  return `{${head}"itemListElement":[${items.join(',')}],${nextField}"itemScore":${scores},"queryDuration":${JSON.stringify(queryDuration())}}`;
}

/** `rp` is the 1-based position of the product in the whole result list. */
export function renderProduct(
  product: CatalogueProduct,
  rp: number,
  options: RenderOptions,
): ResultProduct {
  const link = (kind: LinkKind, target: string): string => {
    const values: Record<string, string> = {
      pid: product.id,
      sid: options.sid,
      rp: String(rp),
      kind,
      u: target,
    };
    const query = PARAM_ORDER[kind]
      .map((name) => `${name}=${formEncode(values[name] ?? '')}`)
      .join('&');
    return `${options.origin}/v1/url?${query}`;
  };

  // Built in two steps so the JSON keys keep the document's order.
  const head: Omit<ResultProduct, 'offers'> = options.ld
    ? { '@context': SCHEMA, '@type': 'Product', name: product.name }
    : { '@type': 'Product', name: product.name };
  if (product.image) head.image = { ...product.image };
  if (product.description !== undefined) head.description = product.description;
  if (product.brand) {
    const brand: ResultBrand = {};
    if (product.brand.name !== undefined) brand.name = product.brand.name;
    if (product.brand.url !== undefined) brand.url = link('brand', product.brand.url);
    if (product.brand.logo) brand.logo = { ...product.brand.logo };
    head.brand = brand;
  }
  const offers = product.offers.map((offer) => renderOffer(offer, link, options.ld));
  const [single] = offers;
  const result: ResultProduct = {
    ...head,
    offers: offers.length === 1 && single ? single : renderAggregate(product.offers, offers),
  };
  if (product.aggregateRating) result.aggregateRating = { ...product.aggregateRating };
  if (product.mpn !== undefined) result.mpn = product.mpn;
  if (product.gtin !== undefined) result.gtin = product.gtin;
  if (product.productID !== undefined) result.productID = product.productID;
  return result;
}

const UNRESERVED = /^[\w*.-]*$/;

/**
 * A value as URLSearchParams writes it (application/x-www-form-urlencoded: space as '+', every
 * byte but ASCII letters, digits and `*-._` percent-encoded), without building a
 * URLSearchParams per link: a page has dozens of links.
 */
function formEncode(value: string): string {
  if (UNRESERVED.test(value)) return value;
  return encodeURIComponent(value)
    .replace(/[!'()~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replaceAll('%20', '+');
}

type Linker = (kind: LinkKind, target: string) => string;

function renderOffer(offer: CatalogueOffer, link: Linker, ld: boolean): ResultOffer {
  const result: ResultOffer = {
    '@type': 'Offer',
    url: link('offer', offer.url),
    seller: renderSeller(offer.seller, link, ld),
  };
  if (offer.price) {
    result.price = offer.price.amount;
    result.priceCurrency = offer.price.currency;
  }
  const enumValue = (value: string): string => (ld ? `${SCHEMA}/${value}` : value);
  if (offer.availability) result.availability = enumValue(offer.availability);
  if (offer.itemCondition) result.itemCondition = enumValue(offer.itemCondition);
  if (offer.category) {
    result.category = offer.category.map((node) =>
      node.url === undefined
        ? { name: node.name }
        : { name: node.name, url: link('category', node.url) },
    );
  }
  if (offer.name !== undefined) result.name = offer.name;
  if (offer.image) result.image = { ...offer.image };
  if (offer.sku !== undefined) result.sku = offer.sku;
  if (offer.mpn !== undefined) result.mpn = offer.mpn;
  if (offer.gtin !== undefined) result.gtin = offer.gtin;
  if (offer.productID !== undefined) result.productID = offer.productID;
  return result;
}

/** In the minimal JSON form some sellers carry only their name (section 2.8). */
function renderSeller(seller: CatalogueSeller, link: Linker, ld: boolean): ResultOrganization {
  if (seller.minimal && !ld) return { name: seller.name };
  const result: ResultOrganization = { name: seller.name, url: link('seller', seller.url) };
  if (seller.logo) result.logo = { ...seller.logo };
  return result;
}

/** highPrice/lowPrice/priceCurrency only when every offer has a price in one currency (2.6). */
function renderAggregate(
  source: readonly CatalogueOffer[],
  offers: ResultOffer[],
): ResultAggregateOffer {
  const result: ResultAggregateOffer = { '@type': 'AggregateOffer', offers };
  const prices = source.map((offer) => offer.price);
  const currency = prices[0]?.currency;
  if (currency === undefined || !prices.every((price) => price?.currency === currency)) {
    return result;
  }
  const amounts = prices.map((price) => price?.amount ?? '');
  const byValue = [...amounts].sort((a, b) => Number(a) - Number(b));
  result.highPrice = byValue[byValue.length - 1] ?? '';
  result.lowPrice = byValue[0] ?? '';
  result.priceCurrency = currency;
  return result;
}

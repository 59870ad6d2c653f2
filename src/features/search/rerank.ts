import {
  isAggregateOffer,
  type Product,
  type ResultList,
} from '../../upstreams/search/search-schemas.js';

export const SORT_ORDERS = ['relevance', 'price_asc', 'price_desc', 'rating'] as const;
export type SortOrder = (typeof SORT_ORDERS)[number];

/** A price as the document shapes it: digits with an optional fixed decimal part. */
const PRICE = /^\d+(\.\d+)?$/;

interface PriceKey {
  currency: string;
  amount: number;
}

/** A single offer's price, or an AggregateOffer's lowPrice: the "from" price a shopper sees. */
function priceKey(product: Product): PriceKey | undefined {
  const offers = product.offers;
  const price = isAggregateOffer(offers) ? offers.lowPrice : offers.price;
  const currency = offers.priceCurrency;
  if (price === undefined || currency === undefined || !PRICE.test(price)) return undefined;
  return { currency, amount: Number(price) };
}

/**
 * The order of item indices for a sort. Items without the sort key go last in upstream order;
 * the sort is stable, so ties keep upstream order too. Prices are never converted between
 * currencies: priced items are grouped by currency in order of first appearance.
 */
export function sortPermutation(items: readonly Product[], sort: SortOrder): number[] {
  const indices = items.map((_, i) => i);
  if (sort === 'relevance') return indices;

  if (sort === 'rating') {
    const rating = items.map((item) => item.aggregateRating);
    const keyed = indices.filter((i) => rating[i] !== undefined);
    const rest = indices.filter((i) => rating[i] === undefined);
    keyed.sort((a, b) => {
      const ra = rating[a]!;
      const rb = rating[b]!;
      return rb.ratingValue - ra.ratingValue || rb.ratingCount - ra.ratingCount;
    });
    return [...keyed, ...rest];
  }

  const keys = items.map(priceKey);
  const currencyRank = new Map<string, number>();
  for (const key of keys)
    if (key && !currencyRank.has(key.currency)) currencyRank.set(key.currency, currencyRank.size);
  const direction = sort === 'price_asc' ? 1 : -1;
  const keyed = indices.filter((i) => keys[i] !== undefined);
  const rest = indices.filter((i) => keys[i] === undefined);
  keyed.sort((a, b) => {
    const ka = keys[a]!;
    const kb = keys[b]!;
    return (
      currencyRank.get(ka.currency)! - currencyRank.get(kb.currency)! ||
      direction * (ka.amount - kb.amount)
    );
  });
  return [...keyed, ...rest];
}

/** The list with items and their scores permuted together. */
export function rerank(list: ResultList, sort: SortOrder): ResultList {
  const order = sortPermutation(list.itemListElement, sort);
  return {
    ...list,
    itemListElement: order.map((i) => list.itemListElement[i]!),
    itemScore: order.map((i) => list.itemScore[i]!),
  };
}

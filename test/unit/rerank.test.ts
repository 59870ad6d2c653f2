import { describe, expect, it } from 'vitest';
import { rerank, sortPermutation } from '../../src/features/search/rerank.js';
import type { Product, ResultList } from '../../src/upstreams/search/search-schemas.js';

function product(
  name: string,
  extra: Partial<Product> & { price?: string; currency?: string } = {},
): Product {
  const { price, currency, ...rest } = extra;
  return {
    name,
    offers: {
      url: `https://s.test/v1/url?rp=0`,
      seller: { name: 'Shop' },
      ...(price === undefined ? {} : { price, priceCurrency: currency ?? 'EUR' }),
    },
    ...rest,
  };
}

const rated = (name: string, ratingValue: number, ratingCount = 10) =>
  product(name, { aggregateRating: { ratingValue, ratingCount } });

describe('sortPermutation', () => {
  it('when sorting by relevance, then the upstream order is kept', () => {
    expect(sortPermutation([product('a'), product('b')], 'relevance')).toEqual([0, 1]);
  });

  it('when sorting by price, then items without a price go last in upstream order', () => {
    const items = [
      product('none1'),
      product('p20', { price: '20.00' }),
      product('none2'),
      product('p5', { price: '5.00' }),
    ];
    expect(sortPermutation(items, 'price_asc')).toEqual([3, 1, 0, 2]);
    expect(sortPermutation(items, 'price_desc')).toEqual([1, 3, 0, 2]);
  });

  it('when prices tie, then upstream order breaks the tie', () => {
    const items = [
      product('a', { price: '5.00' }),
      product('b', { price: '5.00' }),
      product('c', { price: '1.00' }),
    ];
    expect(sortPermutation(items, 'price_asc')).toEqual([2, 0, 1]);
  });

  it('when a price is not a plain decimal, then it counts as missing', () => {
    const items = [product('bad', { price: '1,299.00' }), product('ok', { price: '9.99' })];
    expect(sortPermutation(items, 'price_asc')).toEqual([1, 0]);
  });

  it('when currencies differ, then amounts are never compared across them', () => {
    const items = [
      product('yen', { price: '1200', currency: 'JPY' }),
      product('eur', { price: '5.00', currency: 'EUR' }),
      product('yen-cheap', { price: '300', currency: 'JPY' }),
    ];
    expect(sortPermutation(items, 'price_asc')).toEqual([2, 0, 1]);
  });

  it('when an AggregateOffer has a lowPrice, then that is its price', () => {
    const aggregate: Product = {
      name: 'agg',
      offers: {
        lowPrice: '3.00',
        highPrice: '50.00',
        priceCurrency: 'EUR',
        offers: [
          { url: 'u1', seller: { name: 'A' }, price: '3.00', priceCurrency: 'EUR' },
          { url: 'u2', seller: { name: 'B' }, price: '50.00', priceCurrency: 'EUR' },
        ],
      },
    };
    expect(sortPermutation([product('p10', { price: '10.00' }), aggregate], 'price_asc')).toEqual([
      1, 0,
    ]);
  });

  it('when sorting by rating, then higher ratings come first, more ratings break ties, unrated last', () => {
    const items = [
      product('unrated'),
      rated('r3', 3),
      rated('r45few', 4.5, 2),
      rated('r45many', 4.5, 200),
    ];
    expect(sortPermutation(items, 'rating')).toEqual([3, 2, 1, 0]);
  });
});

describe('rerank', () => {
  it('when items move, then their scores move with them', () => {
    const list: ResultList = {
      itemListElement: [product('a', { price: '9.00' }), product('b', { price: '1.00' })],
      itemScore: [0.9, 0.4],
      queryDuration: 3,
    };
    const result = rerank(list, 'price_asc');
    expect(result.itemListElement.map((p) => p.name)).toEqual(['b', 'a']);
    expect(result.itemScore).toEqual([0.4, 0.9]);
    expect(result.queryDuration).toBe(3);
  });
});

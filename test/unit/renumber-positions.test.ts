import { describe, expect, it } from 'vitest';
import { renumberPositions } from '../../src/features/search/renumber-positions.js';
import { createRedirectUrlMatcher } from '../../src/features/search/rp-param.js';
import { isAggregateOffer, type Product } from '../../src/upstreams/search/search-schemas.js';

const BASE = 'https://search.example.test';
const isRedirect = createRedirectUrlMatcher(BASE);
const r = (query: string) => `${BASE}/v1/url?${query}`;

function full(id: string, rp: string | undefined): Product {
  const tail = rp === undefined ? '' : `&rp=${rp}`;
  return {
    name: id,
    brand: { name: 'B', url: r(`pid=${id}&kind=brand${tail}`) },
    offers: {
      offers: [
        {
          url: r(`pid=${id}${tail}&kind=offer`),
          seller: { name: 'S', url: r(`kind=seller${tail}&pid=${id}`) },
          category: [{ name: 'C', url: r(`kind=category&pid=${id}${tail}`) }],
        },
        {
          url: r(`pid=${id}&kind=offer2${tail}`),
          seller: { name: 'T', url: 'https://shop.test/?rp=keep' },
        },
      ],
    },
  };
}

function urlsOf(product: Product): string[] {
  const offers = isAggregateOffer(product.offers) ? product.offers.offers : [];
  return [
    ...offers.flatMap((o) => [
      o.url,
      o.seller.url ?? '',
      ...(o.category ?? []).map((c) => c.url ?? ''),
    ]),
    product.brand?.url ?? '',
  ];
}

describe('renumberPositions', () => {
  it('when products are reordered, then each takes the rp its new position had upstream, in every redirect URL', () => {
    const upstream = [full('a', '11'), full('b', '12'), full('c', '13')];
    const reranked = [upstream[2]!, upstream[0]!, upstream[1]!];
    renumberPositions([...upstream], reranked, isRedirect);
    expect(urlsOf(reranked[0]!)).toEqual([
      r('pid=c&rp=11&kind=offer'),
      r('kind=seller&rp=11&pid=c'),
      r('kind=category&pid=c&rp=11'),
      r('pid=c&kind=offer2&rp=11'),
      'https://shop.test/?rp=keep', // not the redirect endpoint: untouched
      r('pid=c&kind=brand&rp=11'),
    ]);
    expect(reranked[1]!.offers).toMatchObject({
      offers: [{ url: r('pid=a&rp=12&kind=offer') }, {}],
    });
    expect(reranked[2]!.brand?.url).toBe(r('pid=b&kind=brand&rp=13'));
  });

  it('when the upstream product at a position had no rp, then the product landing there keeps its URLs', () => {
    const upstream = [full('a', undefined), full('b', '2')];
    const reranked = [upstream[1]!, upstream[0]!];
    renumberPositions([...upstream], reranked, isRedirect);
    expect(reranked[0]!.brand?.url).toBe(r('pid=b&kind=brand&rp=2'));
    // a had no rp and gets position 2's value in none of its URLs, since it has no rp to set
    expect(reranked[1]!.brand?.url).toBe(r('pid=a&kind=brand'));
  });
});

import { isAggregateOffer, type Product } from '../../upstreams/search/search-schemas.js';

type Rewrite = (url: string) => string;

/**
 * Visits every redirect URL of a product in a fixed order (offer or nested offers with their
 * seller and categories, then brand) and stores what `rewrite` returns. Mutates the product,
 * which is the gateway's own parsed copy.
 */
export function rewriteProductUrls(product: Product, rewrite: Rewrite): void {
  const offers = isAggregateOffer(product.offers) ? product.offers.offers : [product.offers];
  for (const offer of offers) {
    offer.url = rewrite(offer.url);
    if (offer.seller.url !== undefined) offer.seller.url = rewrite(offer.seller.url);
    for (const category of offer.category ?? []) {
      if (category.url !== undefined) category.url = rewrite(category.url);
    }
  }
  if (product.brand?.url !== undefined) product.brand.url = rewrite(product.brand.url);
}

/** The first value found by `read` among a product's redirect URLs, in visiting order. */
export function findInProductUrls(
  product: Product,
  read: (url: string) => string | undefined,
): string | undefined {
  let found: string | undefined;
  rewriteProductUrls(product, (url) => {
    found ??= read(url);
    return url;
  });
  return found;
}

import { isAggregateOffer, type Product } from '../../upstreams/search/search-schemas.js';

/** One place in a product that holds a URL: an object and the field (`url`) it sits in. */
export interface UrlSlot {
  readonly holder: { url?: string | undefined };
  readonly url: string;
}

/**
 * Every URL of a product, in a fixed order: the offer or nested offers with their seller and
 * categories, then the brand. Slots point into the gateway's own parsed copy, so writing one
 * changes the product in place.
 */
export function urlSlots(product: Product): UrlSlot[] {
  const slots: UrlSlot[] = [];
  const add = (holder: { url?: string | undefined }) => {
    if (holder.url !== undefined) slots.push({ holder, url: holder.url });
  };
  const offers = isAggregateOffer(product.offers) ? product.offers.offers : [product.offers];
  for (const offer of offers) {
    add(offer);
    add(offer.seller);
    for (const category of offer.category ?? []) add(category);
  }
  if (product.brand) add(product.brand);
  return slots;
}

/**
 * `SEARCH_LINKS=gateway` (contract section 5): a redirect URL's origin and path become `path`
 * (the gateway's `/api/search/url`), and every byte of its query and fragment is kept.
 */
export function throughGateway(url: string, path: string): string {
  const question = url.indexOf('?');
  const hash = url.indexOf('#');
  const cut = question < 0 ? hash : hash < 0 ? question : Math.min(question, hash);
  return cut < 0 ? path : `${path}${url.slice(cut)}`;
}

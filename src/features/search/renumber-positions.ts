import type { Product } from '../../upstreams/search/search-schemas.js';
import { urlSlots, type UrlSlot } from './redirect-urls.js';
import { readRp, withRp } from './rp-param.js';

/**
 * The `rp` rule (contract section 5): after reranking, the product now at position i carries
 * in `rp` the value the upstream gave to the product that was at position i, so positions keep
 * the upstream's numbering (including page offsets). Only redirect-endpoint URLs are touched,
 * and each URL is judged once. A position whose upstream product had no `rp` has no value to
 * hand on; the product that lands there keeps its URLs as given.
 */
export function renumberPositions(
  upstreamOrder: readonly Product[],
  reranked: readonly Product[],
  isRedirectUrl: (url: string) => boolean,
  /** Rewrites every redirect URL once its `rp` is settled (SEARCH_LINKS=gateway). */
  relink: (url: string) => string = (url) => url,
): void {
  const redirects = new Map<Product, UrlSlot[]>(
    upstreamOrder.map((product) => [
      product,
      urlSlots(product).filter((s) => isRedirectUrl(s.url)),
    ]),
  );
  const positions = upstreamOrder.map((product) => {
    for (const slot of redirects.get(product) ?? []) {
      const rp = readRp(slot.url);
      if (rp !== undefined) return rp;
    }
    return undefined;
  });
  reranked.forEach((product, i) => {
    const value = positions[i];
    for (const slot of redirects.get(product) ?? []) {
      slot.holder.url = relink(value === undefined ? slot.url : withRp(slot.url, value));
    }
  });
}

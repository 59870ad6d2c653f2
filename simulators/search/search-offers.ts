import { CURRENCIES, type CategoryData } from './search-catalogue-data.js';
import type { Random } from '../sim-random.js';
import type {
  Availability,
  CatalogueCategory,
  CatalogueImage,
  CatalogueOffer,
  CataloguePrice,
  CatalogueSeller,
  CurrencyCode,
  ItemCondition,
} from './search-types.js';

/** What offer generation needs to know about the product the offers belong to. */
export interface OfferContext {
  rng: Random;
  category: CategoryData;
  productName: string;
  slug: string;
  sellers: readonly CatalogueSeller[];
  /** Reference price in EUR; each offer varies around it, in its seller's currency. */
  baseEur: number;
  /** An image for variant n, which differs from the product's. */
  variantImage(variant: number): CatalogueImage;
  gtin(): string;
}

const AVAILABILITY = {
  values: ['InStock', 'OutOfStock', 'LimitedAvailability', 'OnlineOnly', 'PreOrder', 'BackOrder', 'InStoreOnly', 'SoldOut', 'Discontinued', 'PreSale'] as Availability[], // prettier-ignore
  weights: [60, 8, 8, 5, 4, 4, 3, 3, 2, 1],
};

const USED = {
  values: ['UsedCondition', 'RefurbishedCondition', 'DamagedCondition'] as ItemCondition[],
  weights: [6, 3, 1],
};

/** Formats minor units as Text with exactly the currency's decimals (section 2.5). */
export function formatPrice(minor: number, currency: CurrencyCode): string {
  const { decimals } = CURRENCIES[currency];
  if (decimals === 0) return String(minor);
  const unit = 10 ** decimals;
  return `${Math.floor(minor / unit)}.${String(minor % unit).padStart(decimals, '0')}`;
}

/** Converts and rounds the way shops price things: 49.99, 12980 yen, 12.500 dinar. */
function priceIn(rng: Random, eur: number, currency: CurrencyCode): CataloguePrice {
  const { decimals, perEur } = CURRENCIES[currency];
  const value = eur * perEur;
  let minor: number;
  if (decimals === 0) {
    minor = Math.max(100, Math.round(value / 100) * 100 - (rng.chance(0.4) ? 20 : 0));
  } else if (decimals === 3) {
    minor = Math.max(250, Math.round(value * 4) * 250 - (rng.chance(0.3) ? 10 : 0));
  } else {
    minor = Math.max(1, Math.round(value)) * 100 - (rng.chance(0.6) ? 1 : 0);
  }
  return { amount: formatPrice(minor, currency), currency };
}

export function slugify(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

/** The target's view of the category: with page URLs when its taxonomy has them. */
function categoriesFor(category: CategoryData, seller: CatalogueSeller): CatalogueCategory[] {
  const slugs = category.path.map(slugify);
  return category.path.map((name, depth) =>
    seller.categoryUrls
      ? { name, url: `${seller.url}c/${slugs.slice(0, depth + 1).join('/')}` }
      : { name },
  );
}

function createOffer(ctx: OfferContext, seller: CatalogueSeller, eur: number): CatalogueOffer {
  const { rng } = ctx;
  const sku = `${seller.skuPrefix}-${rng.digits(6)}`;
  const path = seller.productPath.replace('{slug}', ctx.slug).replace('{sku}', sku);
  const offer: CatalogueOffer = { url: seller.url + path, seller };
  if (rng.chance(0.94)) offer.price = priceIn(rng, eur, seller.currency);
  if (rng.chance(0.9)) offer.availability = rng.weighted(AVAILABILITY.values, AVAILABILITY.weights);
  if (rng.chance(0.5)) offer.itemCondition = 'NewCondition';
  if (rng.chance(0.75)) offer.category = categoriesFor(ctx.category, seller);
  if (rng.chance(0.8)) offer.sku = sku;
  return offer;
}

const around = (rng: Random, eur: number, spread: number): number =>
  eur * (1 - spread + 2 * spread * rng.next());

/** Several targets sell the same product; most often targets sharing one currency. */
function fromSeveralSellers(ctx: OfferContext): CatalogueOffer[] {
  const { rng, sellers } = ctx;
  const count = rng.int(2, 4);
  const first = rng.pick(sellers);
  const sameCurrency = sellers.filter((seller) => seller.currency === first.currency);
  const pool = sameCurrency.length >= 2 && rng.chance(0.65) ? sameCurrency : sellers;
  return rng
    .sample(pool, Math.min(count, pool.length))
    .map((seller) => createOffer(ctx, seller, around(rng, ctx.baseEur, 0.12)));
}

/** One target lists the product new and second-hand; sometimes another target joins. */
function newAndUsed(ctx: OfferContext): CatalogueOffer[] {
  const { rng } = ctx;
  const seller = rng.pick(ctx.sellers);
  const fresh = createOffer(ctx, seller, ctx.baseEur);
  fresh.itemCondition = 'NewCondition';
  const used = createOffer(ctx, seller, ctx.baseEur * (0.55 + 0.25 * rng.next()));
  used.itemCondition = rng.weighted(USED.values, USED.weights);
  const offers = [fresh, used];
  if (rng.chance(0.4)) {
    const other = rng.pick(ctx.sellers.filter((candidate) => candidate !== seller));
    offers.push(createOffer(ctx, other, around(rng, ctx.baseEur, 0.1)));
  }
  return offers;
}

/** Variants in the target's model are merged in as separate offers (section 2.2). */
function variants(ctx: OfferContext): CatalogueOffer[] {
  const { rng } = ctx;
  const seller = rng.pick(ctx.sellers);
  const labels = rng.sample(
    ctx.category.variants,
    rng.int(2, Math.min(3, ctx.category.variants.length)),
  );
  return labels.map((label, index) => {
    const offer = createOffer(ctx, seller, around(rng, ctx.baseEur, 0.05));
    offer.name = `${ctx.productName} – ${label}`;
    if (rng.chance(0.6)) offer.gtin = ctx.gtin();
    if (rng.chance(0.5)) offer.image = ctx.variantImage(index + 1);
    return offer;
  });
}

/** The product's offers: one (shown as Offer) or several (shown as AggregateOffer). */
export function createOffers(ctx: OfferContext): CatalogueOffer[] {
  const kind = ctx.rng.weighted(['single', 'sellers', 'used', 'variants'] as const, [55, 28, 9, 8]);
  switch (kind) {
    case 'single':
      return [createOffer(ctx, ctx.rng.pick(ctx.sellers), ctx.baseEur)];
    case 'sellers':
      return fromSeveralSellers(ctx);
    case 'used':
      return newAndUsed(ctx);
    case 'variants':
      return variants(ctx);
  }
}

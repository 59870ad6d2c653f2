/**
 * Shapes of the product search service, as the simulator holds them (Catalogue*) and as it
 * answers them (Result*). Result shapes follow search-service-api.md section 2; the
 * catalogue keeps external URLs, which results only ever show through the redirect endpoint.
 */

/** Offer availability values (section 2.5). */
export const AVAILABILITIES = [
  'BackOrder',
  'Discontinued',
  'InStock',
  'InStoreOnly',
  'LimitedAvailability',
  'OnlineOnly',
  'OutOfStock',
  'PreOrder',
  'PreSale',
  'SoldOut',
] as const;
export type Availability = (typeof AVAILABILITIES)[number];

/** Offer itemCondition values (section 2.5). */
export const ITEM_CONDITIONS = [
  'DamagedCondition',
  'NewCondition',
  'RefurbishedCondition',
  'UsedCondition',
] as const;
export type ItemCondition = (typeof ITEM_CONDITIONS)[number];

export type CurrencyCode = 'EUR' | 'USD' | 'GBP' | 'JPY' | 'KWD';

export interface CatalogueImage {
  url: string;
  thumbnail: string;
}

/** A configured target: name and root URL are configuration, not crawled (section 2.8). */
export interface CatalogueSeller {
  key: string;
  name: string;
  /** Root-path URL, external. */
  url: string;
  logo?: CatalogueImage;
  currency: CurrencyCode;
  /** In the minimal JSON form this seller is shown with its name only. */
  minimal: boolean;
  /** Product page path under the root URL; {slug} and {sku} are filled in. */
  productPath: string;
  /** Whether this target's taxonomy exposes category page URLs. */
  categoryUrls: boolean;
  skuPrefix: string;
}

export interface CatalogueBrand {
  name?: string;
  /** External URL, or a page on the seller's site. */
  url?: string;
  logo?: CatalogueImage;
}

export interface CatalogueCategory {
  name: string;
  /** External category page on the seller's site. */
  url?: string;
}

/** A price kept as Text with exactly the currency's decimals, e.g. "4999.00", "1200", "12.500". */
export interface CataloguePrice {
  amount: string;
  currency: CurrencyCode;
}

export interface CatalogueOffer {
  /** External product page on the seller's site. */
  url: string;
  seller: CatalogueSeller;
  price?: CataloguePrice;
  availability?: Availability;
  itemCondition?: ItemCondition;
  category?: CatalogueCategory[];
  /** Only when it differs from the product (variants). */
  name?: string;
  image?: CatalogueImage;
  sku?: string;
  mpn?: string;
  gtin?: string;
  productID?: string;
}

export interface CatalogueProduct {
  /** Stable internal id, shown to clients only as the `pid` tracking parameter. */
  id: string;
  categoryKey: string;
  /** Names of the category path, e.g. ["Electronics", "Audio", "Headphones"]; searchable. */
  categoryPath: string[];
  name: string;
  image?: CatalogueImage;
  description?: string;
  brand?: CatalogueBrand;
  /** One offer is shown as schema:Offer, several as schema:AggregateOffer. */
  offers: CatalogueOffer[];
  aggregateRating?: ResultRating;
  mpn?: string;
  gtin?: string;
  productID?: string;
  /** Ranking prior in [0, 1); not part of any result. */
  popularity: number;
}

export type ResultImage = CatalogueImage;

export interface ResultBrand {
  name?: string;
  url?: string;
  logo?: ResultImage;
}

export interface ResultOrganization {
  name: string;
  url?: string;
  logo?: ResultImage;
}

export interface ResultCategoryCode {
  name: string;
  url?: string;
}

export interface ResultRating {
  ratingValue: number;
  ratingCount: number;
}

export interface ResultOffer {
  '@type': 'Offer';
  url: string;
  seller: ResultOrganization;
  price?: string;
  priceCurrency?: string;
  /** Short form in JSON; may be the full https://schema.org/… URL in LD-JSON. */
  availability?: string;
  itemCondition?: string;
  category?: ResultCategoryCode[];
  name?: string;
  image?: ResultImage;
  sku?: string;
  mpn?: string;
  gtin?: string;
  productID?: string;
}

export interface ResultAggregateOffer {
  '@type': 'AggregateOffer';
  offers: ResultOffer[];
  highPrice?: string;
  lowPrice?: string;
  priceCurrency?: string;
}

export interface ResultProduct {
  '@context'?: 'https://schema.org';
  '@type': 'Product';
  name: string;
  image?: ResultImage;
  description?: string;
  brand?: ResultBrand;
  offers: ResultOffer | ResultAggregateOffer;
  aggregateRating?: ResultRating;
  mpn?: string;
  gtin?: string;
  productID?: string;
}

/** custom:ResultList (section 2.1). */
export interface ResultList {
  '@context'?: 'https://schema.org';
  '@type'?: 'ItemList';
  itemListElement: ResultProduct[];
  next?: string;
  itemScore: number[];
  queryDuration: number;
}

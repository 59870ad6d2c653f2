import { z } from 'zod';
import { inPlaceSchema } from '../../errors/in-place-schema.js';

/*
 * The search document's resources (search-service-api.md section 2). Objects are loose: fields
 * the document does not list pass through untouched, so a newer upstream is not a breach.
 * Required fields and types are enforced: a body that breaks them is a 502, never a
 * half-typed object.
 */

export const ImageObject = z.looseObject({ url: z.string(), thumbnail: z.string() });

export const Organization = z.looseObject({
  name: z.string(),
  url: z.string().optional(),
  logo: ImageObject.optional(),
});

export const Brand = z.looseObject({
  name: z.string().optional(),
  url: z.string().optional(),
  logo: ImageObject.optional(),
});

export const CategoryCode = z.looseObject({ name: z.string(), url: z.string().optional() });

export const Offer = z.looseObject({
  url: z.string(),
  seller: Organization,
  price: z.string().optional(),
  priceCurrency: z.string().optional(),
  availability: z.string().optional(),
  itemCondition: z.string().optional(),
  category: z.array(CategoryCode).optional(),
});
export type Offer = z.infer<typeof Offer>;

export const AggregateOffer = z.looseObject({
  offers: z.array(Offer).min(1),
  highPrice: z.string().optional(),
  lowPrice: z.string().optional(),
  priceCurrency: z.string().optional(),
});
export type AggregateOffer = z.infer<typeof AggregateOffer>;

export const AggregateRating = z.looseObject({
  ratingValue: z.number(),
  ratingCount: z.number().int().nonnegative(),
});

export const Product = z.looseObject({
  name: z.string(),
  image: ImageObject.optional(),
  description: z.string().optional(),
  brand: Brand.optional(),
  offers: z.union([AggregateOffer, Offer]),
  aggregateRating: AggregateRating.optional(),
  mpn: z.string().optional(),
  gtin: z.string().optional(),
  productID: z.string().optional(),
});
export type Product = z.infer<typeof Product>;

/** The document's itemScore: one score per item, in the items' order. */
const oneScorePerItem = (list: { itemScore: unknown[]; itemListElement: unknown[] }): boolean =>
  list.itemScore.length === list.itemListElement.length;

export const ResultList = z
  .looseObject({
    itemListElement: z.array(Product),
    next: z.string().optional(),
    itemScore: z.array(z.number()),
    queryDuration: z.number().int().nonnegative(),
  })
  .refine(oneScorePerItem, {
    message: 'itemScore must have one score per item',
    path: ['itemScore'],
  });
export type ResultList = z.infer<typeof ResultList>;

/** ResultList's verdict on an upstream body without zod's copy of it (in-place-schema.ts). */
export const ResultListInPlace = inPlaceSchema(ResultList, [oneScorePerItem]);

export function isAggregateOffer(offers: Product['offers']): offers is AggregateOffer {
  return 'offers' in offers && Array.isArray(offers.offers);
}

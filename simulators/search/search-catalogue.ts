import { CATEGORIES, SELLERS, type CategoryData } from './search-catalogue-data.js';
import { createOffers, slugify } from './search-offers.js';
import { createRandom, deriveSeed, type Random } from '../sim-random.js';
import { createSearchIndex, type RankedProduct } from './search-ranking.js';
import type {
  CatalogueBrand,
  CatalogueImage,
  CatalogueProduct,
  CatalogueSeller,
  ResultRating,
} from './search-types.js';

export interface SearchCatalogueOptions {
  /** Same seed, same catalogue, on every machine. */
  seed?: number;
  productCount?: number;
  /** Origin of the image host that every image and logo URL points at. */
  imageHost?: string;
}

export interface SearchCatalogue {
  readonly seed: number;
  readonly sellers: readonly CatalogueSeller[];
  readonly products: readonly CatalogueProduct[];
  get(id: string): CatalogueProduct | undefined;
  /** Matching products, best first (see search-ranking.ts). */
  search(query: string): RankedProduct[];
}

export const DEFAULT_SEED = 20_240_611;
const MAX_PRODUCTS = 100_000;

/** Builds a deterministic catalogue of realistic, unevenly complete products. */
export function createSearchCatalogue(options: SearchCatalogueOptions = {}): SearchCatalogue {
  const {
    seed = DEFAULT_SEED,
    productCount = 400,
    imageHost = 'https://img.example.test',
  } = options;
  if (!Number.isSafeInteger(seed)) throw new TypeError('seed must be an integer');
  if (!Number.isInteger(productCount) || productCount < 1 || productCount > MAX_PRODUCTS) {
    throw new RangeError(`productCount must be an integer from 1 to ${MAX_PRODUCTS}`);
  }
  const images = createImageUrls(new URL(imageHost).origin);
  const sellers = SELLERS.map(({ logo, ...seller }): CatalogueSeller => {
    const built: CatalogueSeller = { ...seller };
    if (logo) built.logo = images.logo(seller.key, logo);
    return built;
  });
  const products = Array.from({ length: productCount }, (_, index) =>
    createProduct({ rng: createRandom(deriveSeed(seed, index)), index, sellers, images }),
  );
  const byId = new Map(products.map((product) => [product.id, product]));
  const index = createSearchIndex(products);
  return {
    seed,
    sellers,
    products,
    get: (id) => byId.get(id),
    search: (query) => index.search(query),
  };
}

interface ImageUrls {
  /** 512px image with a 256px thumbnail (section 2.3). */
  product(key: string): CatalogueImage;
  /** 192px logo with a 96px thumbnail. */
  logo(key: string, format: string): CatalogueImage;
}

function createImageUrls(host: string): ImageUrls {
  return {
    product: (key) => ({
      url: `${host}/products/${key}/512.jpg`,
      thumbnail: `${host}/products/${key}/256.jpg`,
    }),
    logo: (key, format) => ({
      url: `${host}/logos/${key}/192.${format}`,
      thumbnail: `${host}/logos/${key}/96.${format}`,
    }),
  };
}

interface ProductInput {
  rng: Random;
  index: number;
  sellers: readonly CatalogueSeller[];
  images: ImageUrls;
}

function createProduct({ rng, index, sellers, images }: ProductInput): CatalogueProduct {
  const category = rng.weighted(
    CATEGORIES,
    CATEGORIES.map(({ weight }) => weight),
  );
  const id = `prd-${String(index + 1).padStart(6, '0')}`;
  const maker = rng.pick(category.brands);
  const suffix = rng.chance(0.2) ? rng.pick([' Pro', ' Max', ' Lite', 'X']) : '';
  const model = `${maker.code}${rng.int(10, 99) * 10}${suffix}`;
  const words = {
    brand: maker.name,
    model,
    adj: rng.pick(category.adjectives),
    noun: rng.pick(category.nouns),
  };
  const title = category.titles
    ? `${rng.pick(category.titles[0])} ${rng.pick(category.titles[1])}`
    : '';
  const name = fill(category.template, { ...words, title });
  const [low, high] = category.priceEur;
  const gtin = () => createGtin(rng, category);

  const product: CatalogueProduct = {
    id,
    categoryKey: category.key,
    categoryPath: [...category.path],
    name,
    offers: createOffers({
      rng,
      category,
      productName: name,
      slug: slugify(name),
      sellers,
      baseEur: low + (high - low) * rng.next() ** 2,
      variantImage: (variant) => images.product(`${id}-v${variant}`),
      gtin,
    }),
    popularity: rng.next(),
  };
  if (rng.chance(0.88)) product.image = images.product(id);
  if (rng.chance(0.8)) {
    const sentences = rng.sample(category.descriptions, rng.int(1, 2));
    product.description = fill(sentences.join(' '), { ...words, n: String(rng.int(2, 9)) });
  }
  if (rng.chance(0.85)) product.brand = createBrand(rng, maker.name, product, images);
  if (rng.chance(0.7)) product.aggregateRating = createRating(rng);
  if (rng.chance(category.isbn ? 0.85 : 0.6)) product.gtin = gtin();
  if (!category.isbn && rng.chance(0.5)) {
    product.mpn = `${model.replace(/\W/g, '')}-${rng.pick(['BK', 'WH', '01', 'EU', 'A'])}`;
  }
  if (rng.chance(0.2))
    product.productID = `B0${rng
      .int(0, 36 ** 8 - 1)
      .toString(36)
      .toUpperCase()
      .padStart(8, '0')}`;
  return product;
}

function fill(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (whole, key: string) => values[key] ?? whole);
}

/** Brand URLs are external or a page on the first target's site, as targets differ. */
function createBrand(
  rng: Random,
  name: string,
  product: CatalogueProduct,
  images: ImageUrls,
): CatalogueBrand {
  const slug = slugify(name);
  const brand: CatalogueBrand = {};
  // Brand names are extracted and not guaranteed equal across targets (section 2.4).
  if (rng.chance(0.97)) brand.name = rng.chance(0.05) ? name.toUpperCase() : name;
  if (rng.chance(0.55)) {
    const seller = product.offers[0]?.seller;
    brand.url =
      seller && rng.chance(0.5) ? `${seller.url}brands/${slug}` : `https://www.${slug}.example/`;
  }
  if (rng.chance(0.4)) brand.logo = images.logo(slug, rng.pick(['png', 'webp', 'jpg']));
  if (brand.name === undefined && brand.url === undefined) brand.name = name;
  return brand;
}

/** Normalized to 1..5 and skewed high, as shoppers' ratings are. */
function createRating(rng: Random): ResultRating {
  const raw = rng.chance(0.1) ? 1 + 4 * rng.next() : 2.8 + 2.2 * Math.sqrt(rng.next());
  return {
    ratingValue: Math.min(5, Math.round(raw * 10) / 10),
    ratingCount: 1 + Math.floor(3000 * rng.next() ** 3),
  };
}

/** A GS1 GTIN with a valid check digit; books get ISBN-13s (978 prefix). */
function createGtin(rng: Random, category: CategoryData): string {
  if (category.isbn) return withCheckDigit(`978${rng.digits(9)}`);
  if (rng.chance(0.25)) return withCheckDigit(`0${rng.digits(10)}`);
  return withCheckDigit(`${rng.pick(['40', '50', '87', '45', '69'])}${rng.digits(10)}`);
}

/** GS1 check digit: weights 3 and 1 alternate from the rightmost data digit. */
export function withCheckDigit(body: string): string {
  let sum = 0;
  for (let offset = 0; offset < body.length; offset += 1) {
    const digit = body.charCodeAt(body.length - 1 - offset) - 48;
    sum += digit * (offset % 2 === 0 ? 3 : 1);
  }
  return `${body}${(10 - (sum % 10)) % 10}`;
}

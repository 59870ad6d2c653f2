import type { CatalogueProduct } from './search-types.js';

export interface RankedProduct {
  product: CatalogueProduct;
  /** Relative to the query, in (0, 1], rounded to 4 decimals. */
  score: number;
}

export interface SearchIndex {
  /** Matching products, best first; equal scores are ordered by product id. */
  search(query: string): RankedProduct[];
}

/** Where a query word may match, and how much a match there is worth. */
const FIELD_WEIGHTS = { name: 3, brand: 2.5, category: 1.5, description: 1 } as const;
type Field = keyof typeof FIELD_WEIGHTS;

const STOP_WORDS = new Set(['a', 'an', 'and', 'for', 'in', 'of', 'or', 'the', 'to', 'with']);

/** Lower-cased words without accents, split on anything that is not a letter or digit. */
export function tokenize(text: string): string[] {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length > 0);
}

/** Crude singular form, so "laptop" finds "Laptops" and "shoes" finds "Shoe". */
const stem = (word: string): string =>
  word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word;

/** 1 for the same word, 0.6 for a prefix of at least three letters, else 0. */
function matchWord(token: string, words: readonly string[]): number {
  let best = 0;
  const tokenStem = stem(token);
  for (const word of words) {
    if (word === token || stem(word) === tokenStem) return 1;
    if (token.length >= 3 && word.startsWith(token)) best = 0.6;
  }
  return best;
}

/** Tokenizes every product once; queries then only scan word lists. */
export function createSearchIndex(products: readonly CatalogueProduct[]): SearchIndex {
  const entries = products.map((product) => ({
    product,
    fields: {
      name: tokenize(product.name),
      brand: tokenize(product.brand?.name ?? ''),
      category: product.categoryPath.flatMap(tokenize),
      description: tokenize(product.description ?? ''),
    } satisfies Record<Field, string[]>,
  }));

  return {
    search(query) {
      const tokens = [...new Set(tokenize(query))].filter((token) => !STOP_WORDS.has(token));
      if (tokens.length === 0) return [];
      const ranked: RankedProduct[] = [];
      for (const { product, fields } of entries) {
        let sum = 0;
        let matched = 0;
        for (const token of tokens) {
          let best = 0;
          for (const field of Object.keys(FIELD_WEIGHTS) as Field[]) {
            best = Math.max(best, FIELD_WEIGHTS[field] * matchWord(token, fields[field]));
          }
          sum += best;
          if (best > 0) matched += 1;
        }
        if (matched === 0) continue;
        // Products matching every word outrank partial matches; popularity breaks near-ties.
        const coverage = matched / tokens.length;
        const relevance = (sum / (FIELD_WEIGHTS.name * tokens.length)) * coverage;
        const score = relevance * (0.9 + 0.1 * product.popularity);
        ranked.push({ product, score: Math.max(1, Math.round(score * 10_000)) / 10_000 });
      }
      return ranked.sort(
        (a, b) =>
          b.score - a.score ||
          (a.product.id < b.product.id ? -1 : a.product.id > b.product.id ? 1 : 0),
      );
    },
  };
}

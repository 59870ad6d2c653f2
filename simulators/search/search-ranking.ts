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

/**
 * How a query word matches one word of a product: 1 for the same word (or the same crude
 * singular), 0.6 when the product's word starts with it and it has at least three letters.
 */
function matchWord(token: string, tokenStem: string, word: string, wordStem: string): number {
  if (wordStem === tokenStem) return 1;
  return token.length >= 3 && word.startsWith(token) ? 0.6 : 0;
}

const FIELDS = Object.keys(FIELD_WEIGHTS) as Field[];

/** Where a word occurs: the product's index and the weight of the field it is in. */
interface Posting {
  product: number;
  weight: number;
}

/**
 * Tokenizes every product once, into one vocabulary of distinct words with where each occurs:
 * a query word is compared with each distinct word once, not with every product's words (the
 * bench's R4 row must not be limited by this simulator's CPU).
 */
export function createSearchIndex(products: readonly CatalogueProduct[]): SearchIndex {
  const postings = new Map<string, Posting[]>();
  products.forEach((product, index) => {
    const fields: Record<Field, string[]> = {
      name: tokenize(product.name),
      brand: tokenize(product.brand?.name ?? ''),
      category: product.categoryPath.flatMap(tokenize),
      description: tokenize(product.description ?? ''),
    };
    for (const field of FIELDS) {
      for (const word of fields[field]) {
        const list = postings.get(word) ?? [];
        if (list.length === 0) postings.set(word, list);
        list.push({ product: index, weight: FIELD_WEIGHTS[field] });
      }
    }
  });
  const vocabulary = [...postings].map(([word, where]) => ({ word, stem: stem(word), where }));

  /** For each product, the best field weight times match of `token` (0 when none). */
  function scoreToken(token: string): Float64Array {
    const best = new Float64Array(products.length);
    const tokenStem = stem(token);
    for (const { word, stem: wordStem, where } of vocabulary) {
      const match = matchWord(token, tokenStem, word, wordStem);
      if (match === 0) continue;
      for (const { product, weight } of where) {
        best[product] = Math.max(best[product]!, weight * match);
      }
    }
    return best;
  }

  return {
    search(query) {
      const tokens = [...new Set(tokenize(query))].filter((token) => !STOP_WORDS.has(token));
      if (tokens.length === 0) return [];
      const scores = tokens.map(scoreToken);
      const ranked: RankedProduct[] = [];
      products.forEach((product, index) => {
        let sum = 0;
        let matched = 0;
        for (const byProduct of scores) {
          const best = byProduct[index]!;
          sum += best;
          if (best > 0) matched += 1;
        }
        if (matched === 0) return;
        // Products matching every word outrank partial matches; popularity breaks near-ties.
        const coverage = matched / tokens.length;
        const relevance = (sum / (FIELD_WEIGHTS.name * tokens.length)) * coverage;
        const score = relevance * (0.9 + 0.1 * product.popularity);
        ranked.push({ product, score: Math.max(1, Math.round(score * 10_000)) / 10_000 });
      });
      return ranked.sort(
        (a, b) =>
          b.score - a.score ||
          (a.product.id < b.product.id ? -1 : a.product.id > b.product.id ? 1 : 0),
      );
    },
  };
}

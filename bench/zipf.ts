/*
 * Seeded Zipf draws: rank r of n comes with probability proportional to 1 / r^s. The same seed
 * gives the same sequence on every run and every machine (mulberry32 is integer arithmetic).
 */

/** A seeded generator of uniform numbers in [0, 1). */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

export interface ZipfOptions {
  /** How many distinct ranks, 1..n. */
  n: number;
  /** The exponent s: 1 is the classic Zipf law of search queries and web pages. */
  s: number;
  seed: number;
  /** How many draws. */
  length: number;
}

/** `length` ranks in 1..n drawn from Zipf(n, s), by inverse transform on the cumulative weights. */
export function zipfRanks({ n, s, seed, length }: ZipfOptions): number[] {
  const cumulative = new Float64Array(n);
  let total = 0;
  for (let rank = 1; rank <= n; rank += 1) {
    total += 1 / rank ** s;
    cumulative[rank - 1] = total;
  }
  const random = mulberry32(seed);
  return Array.from({ length }, () => 1 + firstAtLeast(cumulative, random() * total));
}

/** The index of the first element ≥ x in an ascending array (binary search). */
function firstAtLeast(sorted: Float64Array, x: number): number {
  let low = 0;
  let high = sorted.length - 1;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (sorted[mid]! < x) low = mid + 1;
    else high = mid;
  }
  return low;
}

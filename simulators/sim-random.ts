/** A small seeded PRNG, so a catalogue is the same on every machine and every run. */
export interface Random {
  /** Uniform in [0, 1). */
  next(): number;
  /** Integer in [min, max], both inclusive. */
  int(min: number, max: number): number;
  chance(probability: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** Picks by relative weight; `weights` runs parallel to `items`. */
  weighted<T>(items: readonly T[], weights: readonly number[]): T;
  /** `count` distinct items in random order. */
  sample<T>(items: readonly T[], count: number): T[];
  digits(count: number): string;
}

/** mulberry32: 32-bit state, good enough spread for test data, trivially reproducible. */
export function createRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1));
  const at = <T>(items: readonly T[], index: number): T => {
    const item = items[index];
    if (item === undefined) throw new Error('cannot pick from an empty list');
    return item;
  };

  return {
    next,
    int,
    chance: (probability) => next() < probability,
    pick: (items) => at(items, Math.floor(next() * items.length)),
    weighted(items, weights) {
      const total = weights.reduce((sum, weight) => sum + weight, 0);
      let roll = next() * total;
      for (let index = 0; index < items.length; index += 1) {
        roll -= weights[index] ?? 0;
        if (roll < 0) return at(items, index);
      }
      return at(items, items.length - 1);
    },
    sample(items, count) {
      const pool = [...items];
      for (let index = pool.length - 1; index > 0; index -= 1) {
        const other = int(0, index);
        [pool[index], pool[other]] = [at(pool, other), at(pool, index)];
      }
      return pool.slice(0, count);
    },
    digits: (count) => Array.from({ length: count }, () => String(int(0, 9))).join(''),
  };
}

/** Derives an independent seed per item, so item i does not change when the count does. */
export function deriveSeed(seed: number, index: number): number {
  let h = (seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

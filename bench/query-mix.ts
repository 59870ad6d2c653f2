import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { zipfRanks } from './zipf.js';

/*
 * The realistic-mix row's searches: ranks drawn once from a seeded Zipf law over several
 * thousand distinct queries, so that every window, every build and either load generator
 * (autocannon in-process, wrk through its Lua script) send the same sequence.
 *
 * Request i searches the row's query plus `<salt>e<epoch>r<rank>`: `salt` names the window, so
 * each window starts on a cold cache; `epoch` (i / epochLength) renames the queries every
 * epochLength requests, so the cache is cold again. Without epochs the hit ratio would climb
 * with every request towards 100%, and a faster build, sending more requests in its window,
 * would be measured on more hits; with them, the hit ratio over whole epochs is one number,
 * `designedHitRatio`, whatever the throughput.
 */

export interface QueryMix {
  readonly distinct: number;
  readonly exponent: number;
  readonly epochLength: number;
  /** The seeded sequence of ranks (1 = the most frequent query); repeated if a window outruns it. */
  readonly ranks: readonly number[];
  /** The same ranks, one a line, for wrk's Lua script. */
  readonly ranksFile: string;
  /** Hits over requests within an epoch if requests were answered one at a time. */
  readonly designedHitRatio: number;
}

export function createQueryMix(options: {
  distinct: number;
  exponent: number;
  epochLength: number;
  epochs: number;
  seed: number;
}): QueryMix {
  const { distinct, exponent, epochLength, epochs, seed } = options;
  const ranks = zipfRanks({ n: distinct, s: exponent, seed, length: epochLength * epochs });
  const dir = mkdtempSync(join(tmpdir(), 'bench-mix-'));
  // wrk reads it in every window of the run: removed when the run's process exits.
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const ranksFile = join(dir, 'ranks.txt');
  writeFileSync(ranksFile, `${ranks.join('\n')}\n`);
  return {
    distinct,
    exponent,
    epochLength,
    ranks,
    ranksFile,
    designedHitRatio: hitRatioOf(ranks, epochLength),
  };
}

/** The path of request `i` (from 0) of a window named `salt`; wrk's MIX_LUA builds the same. */
export function mixPath(path: string, mix: QueryMix, salt: string, i: number): string {
  const rank = mix.ranks[i % mix.ranks.length]!;
  const epoch = Math.floor(i / mix.epochLength);
  return path.replace(/q=([^&]*)/, `q=$1+${salt}e${epoch}r${rank}`);
}

/** Repeats over all requests, each epoch starting on an empty cache. */
function hitRatioOf(ranks: readonly number[], epochLength: number): number {
  let misses = 0;
  for (let start = 0; start < ranks.length; start += epochLength) {
    misses += new Set(ranks.slice(start, start + epochLength)).size;
  }
  return 1 - misses / ranks.length;
}

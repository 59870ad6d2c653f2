import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import { hitRatioBetween, readCacheCounts } from './cache-counts.js';
import type { LoadResult } from './bench-load.js';
import { hasTaskset, type BenchProcess } from './bench-process.js';

/*
 * One measured window of a row: the load generator's figures, and around them the server's CPU
 * (its process tree, from /proc) and its cache counters. CPU per request is the window's CPU
 * over the requests completed in it; `busy` is the window's CPU seconds over its wall seconds,
 * per core the server may use (one when taskset pins it). A server under ~90% busy was waiting
 * for the load side (load generator, simulators, Redis): its req/s measures that side, while
 * its CPU per request still measures the server.
 */

export const LOAD_BOUND_BELOW = 0.9;
/** The cores the server may run on: one when pinned (taskset), else all of them. */
export const SERVER_CORES = hasTaskset ? 1 : cpus().length;

export interface Window extends LoadResult {
  cpuMicrosPerRequest: number;
  /**
   * The part of it off the server's main thread: V8's collector and compiler threads (and
   * libuv's pool). A row whose figure here is high pays for garbage collection or compilation.
   */
  offMainMicrosPerRequest: number;
  /** 0..1: the server's CPU over the window's wall time, per core it may use. */
  busy: number;
  /** Hits over cached reads in the window; undefined where the server counts none. */
  hitRatio: number | undefined;
}

export async function measureWindow(
  server: { process: Pick<BenchProcess, 'cpuMicros' | 'mainThreadCpuMicros'>; origin: string },
  load: () => Promise<LoadResult>,
): Promise<Window> {
  const countsBefore = await readCacheCounts(server.origin);
  const cpuBefore = server.process.cpuMicros();
  const mainBefore = server.process.mainThreadCpuMicros();
  const start = performance.now();
  // The load generator's start and exit (a few ms) are inside the window: busy reads a little low.
  const result = await load();
  const wallMicros = (performance.now() - start) * 1000;
  const cpu = server.process.cpuMicros() - cpuBefore;
  const main = server.process.mainThreadCpuMicros() - mainBefore;
  const countsAfter = await readCacheCounts(server.origin);
  return {
    ...result,
    cpuMicrosPerRequest: result.requests > 0 ? cpu / result.requests : Number.NaN,
    offMainMicrosPerRequest: result.requests > 0 ? (cpu - main) / result.requests : Number.NaN,
    busy: cpu / wallMicros / SERVER_CORES,
    hitRatio: hitRatioBetween(countsBefore, countsAfter),
  };
}

import { LOAD_BOUND_BELOW, type Window } from './measure-window.js';

/*
 * A row's figures over its rounds: the median of each one on its own (the round with the
 * median req/s need not have the median CPU per request), errors summed so that none hides.
 */

export interface Summary {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  cpuMicrosPerRequest: number;
  offMainMicrosPerRequest: number;
  busy: number;
  /** Its median busy is under LOAD_BOUND_BELOW: the load side, not the server, limited req/s. */
  loadBound: boolean;
  hitRatio: number | undefined;
  errors: number;
}

export function summarize(windows: readonly Window[]): Summary {
  const of = (pick: (w: Window) => number) => median(windows.map(pick));
  const hitRatios = windows.flatMap((w) => (w.hitRatio === undefined ? [] : [w.hitRatio]));
  const busy = of((w) => w.busy);
  return {
    rps: of((w) => w.rps),
    p50Ms: of((w) => w.p50Ms),
    p99Ms: of((w) => w.p99Ms),
    cpuMicrosPerRequest: of((w) => w.cpuMicrosPerRequest),
    offMainMicrosPerRequest: of((w) => w.offMainMicrosPerRequest),
    busy,
    loadBound: busy < LOAD_BOUND_BELOW,
    hitRatio: hitRatios.length > 0 ? median(hitRatios) : undefined,
    errors: windows.reduce((sum, w) => sum + w.errors, 0),
  };
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

import type { Stampede } from './cold-stampede.js';
import type { Summary } from './summary.js';

/*
 * The targets of the request-path issue, checked on this build's rows. A throughput target
 * ("G1 ≥ 1.0 × R2") compares req/s while both rows keep their server's core busy; once either is
 * load-bound its req/s measures the load side, and the target compares CPU per request instead
 * (R2's over G1's: the same direction, ≥ 1.0 still means as cheap as R2 or cheaper).
 */

export interface Target {
  what: string;
  met: boolean;
  value: string;
}

export function throughputTarget(
  name: string,
  row: Summary | undefined,
  refName: string,
  ref: Summary | undefined,
  atLeast: number,
): Target | undefined {
  if (row === undefined || ref === undefined) return undefined;
  const byCpu = row.loadBound || ref.loadBound;
  const ratio = byCpu ? ref.cpuMicrosPerRequest / row.cpuMicrosPerRequest : row.rps / ref.rps;
  return {
    what: `${name} ≥ ${atLeast.toFixed(1)} × ${refName}`,
    met: ratio >= atLeast,
    value: `${ratio.toFixed(2)} by ${byCpu ? 'CPU per request (load-bound)' : 'req/s'}`,
  };
}

export function checkTargets(input: {
  /** This build's rows, by name. */
  summaries: ReadonlyMap<string, Summary>;
  stampedes: readonly Stampede[];
  gatewayPeakRssMb: number;
}): Target[] {
  const { summaries, stampedes } = input;
  const oneCall = (label: string, what: string): Target | undefined => {
    const stampede = stampedes.find((s) => s.label === label);
    return (
      stampede && {
        what,
        met: stampede.upstreamCalls === 1,
        value: String(stampede.upstreamCalls),
      }
    );
  };
  const rss = input.gatewayPeakRssMb;
  return [
    throughputTarget('G1', summaries.get('G1'), 'R2', summaries.get('R2'), 1),
    throughputTarget('G3', summaries.get('G3'), 'R4', summaries.get('R4'), 0.6),
    oneCall('G5', 'G5 = exactly 1 upstream call'),
    oneCall('G6', 'G6 stampede over 2 instances = exactly 1 upstream call'),
    Number.isFinite(rss)
      ? { what: 'gateway RSS under load < 150 MB', met: rss < 150, value: rss.toFixed(0) }
      : undefined,
  ].filter((target): target is Target => target !== undefined);
}

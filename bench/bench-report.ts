import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LoadResult } from './bench-load.js';
import { checkTargets } from './bench-targets.js';
import type { Stampede } from './cold-stampede.js';
import { LOAD_BOUND_BELOW, type Window } from './measure-window.js';
import { summarize, type Summary } from './summary.js';
import { markdownTable } from './text-table.js';

/*
 * What `npm run bench` prints and writes to bench/results/latest.json. Each row is compared
 * with its reference row (a bare server doing the same part of the job) twice: by req/s, and
 * by CPU per request, the one that still holds when the load side limits req/s. With a baseline
 * build, each gateway row is printed for both builds, then compared row by row.
 */

export interface ReportedRow {
  name: string;
  what: string;
  /** The row its ratios divide by. */
  ref: string;
  /** On a baseline row: the name of the same row on this build. */
  baselineOf?: string | undefined;
  isGateway: boolean;
  windows: readonly Window[];
  /** The load before the first window (BENCH_WARM_SECONDS): what a started process pays first. */
  warmUp?: Window | undefined;
  peakRssMb: number;
}

export interface ReportInput {
  started: Date;
  /** The run's setup, one line. */
  machine: string;
  /** One line per build when a baseline runs. */
  builds: readonly string[];
  rows: readonly ReportedRow[];
  stampedes: readonly Stampede[];
  fixedRate?: { name: string; rate: number; result: LoadResult } | undefined;
  /** G1z's compressed body over its identity body (issue 18: at most 15%). */
  g1zWireShare?: number | undefined;
  /** The baseline's revision as given (BENCH_BASELINE), when one ran. */
  baselineRev?: string | undefined;
  resultsDir: string;
}

const ratio = (a: number, b: number) => (Number.isFinite(a / b) ? (a / b).toFixed(2) : '—');
const percent = (x: number | undefined) => (x === undefined ? '—' : (x * 100).toFixed(0));

export function report(input: ReportInput): void {
  const summaries = new Map(input.rows.map((row) => [row.name, summarize(row.windows)]));
  const summary = (name: string) => summaries.get(name);
  const lines = input.rows.map((row) => {
    const s = summary(row.name)!;
    const ref = summary(row.ref);
    return [
      row.name,
      row.what,
      row.ref,
      s.rps.toFixed(0),
      ratio(s.rps, ref?.rps ?? Number.NaN),
      s.cpuMicrosPerRequest.toFixed(0),
      ratio(s.cpuMicrosPerRequest, ref?.cpuMicrosPerRequest ?? Number.NaN),
      Number.isFinite(s.offMainMicrosPerRequest) ? s.offMainMicrosPerRequest.toFixed(0) : '—',
      row.warmUp && Number.isFinite(row.warmUp.cpuMicrosPerRequest)
        ? row.warmUp.cpuMicrosPerRequest.toFixed(0)
        : '—',
      percent(s.busy),
      s.loadBound ? 'load-bound' : '',
      percent(s.hitRatio),
      s.p50Ms.toFixed(2),
      s.p99Ms.toFixed(2),
      row.peakRssMb.toFixed(0),
      String(s.errors),
    ];
  });
  const header = [
    'row',
    'what',
    'ref',
    'req/s',
    'req/s vs ref',
    'CPU µs/req',
    'CPU vs ref',
    'off-main µs/req',
    'warm-up µs/req',
    'busy %',
    'load-bound',
    'hit %',
    'p50 ms',
    'p99 ms',
    'peak RSS MB',
    'errors',
  ];
  const thisBuild = new Map(
    input.rows.filter((r) => r.baselineOf === undefined).map((r) => [r.name, summary(r.name)!]),
  );
  const targets = checkTargets({
    summaries: thisBuild,
    stampedes: input.stampedes,
    gatewayPeakRssMb: Math.max(
      ...input.rows
        .filter((r) => r.isGateway && r.baselineOf === undefined)
        .map((r) => r.peakRssMb),
    ),
    g1zWireShare: input.g1zWireShare,
    roundsCpu: new Map(
      input.rows
        .filter((r) => r.baselineOf === undefined)
        .map((r) => [r.name, r.windows.map((w) => w.cpuMicrosPerRequest)]),
    ),
    baselineMix:
      input.baselineRev === undefined
        ? undefined
        : {
            rev: input.baselineRev,
            summary: summary(input.rows.find((r) => r.baselineOf === 'G7')?.name ?? ''),
          },
  });
  const fixed = input.fixedRate;
  const text = [
    `npm run bench, ${input.started.toISOString()}`,
    input.machine,
    ...input.builds,
    `CPU µs/req: the server's process tree (/proc utime + stime) over the window, per request completed; busy: that CPU over the window's wall time; load-bound: busy under ${(LOAD_BOUND_BELOW * 100).toFixed(0)}%, so req/s measures the load side and only the CPU ratio compares; vs ref: this row over its ref row; off-main: the part of that CPU off the server's main thread (V8's collector and compiler threads, libuv's pool); warm-up: CPU per request over the load before the first window, while V8 still compiles (not in the medians).`,
    '',
    ...markdownTable(header, lines),
    '',
    ...baselineComparison(input.rows, summaries),
    ...input.stampedes.map(
      (s) =>
        `${s.label} cold stampede: ${s.requests} concurrent requests for one new key over ${s.instances} instance(s) → ${s.upstreamCalls} upstream call(s), ${s.ok} answered 200`,
    ),
    ...(fixed
      ? [
          `${fixed.name} at a fixed ${fixed.rate} req/s (half its throughput, autocannon): p50 ${fixed.result.p50Ms.toFixed(2)} ms, p99 ${fixed.result.p99Ms.toFixed(2)} ms, ${fixed.result.rps.toFixed(0)} req/s achieved, ${fixed.result.errors} errors`,
        ]
      : []),
    '',
    ...targets.map(({ what, met, value }) => `${met ? 'met   ' : 'MISSED'} ${what}: ${value}`),
    '',
  ].join('\n');
  process.stdout.write(text);
  writeResults(input, summaries, targets);
}

/** Each gateway row against its baseline twin: this build's figure over the baseline's. */
function baselineComparison(
  rows: readonly ReportedRow[],
  summaries: ReadonlyMap<string, Summary>,
): string[] {
  const pairs = rows.flatMap((row) => {
    const ours = row.baselineOf === undefined ? undefined : summaries.get(row.baselineOf);
    return ours
      ? [{ name: row.baselineOf!, baseline: row.name, ours, theirs: summaries.get(row.name)! }]
      : [];
  });
  if (pairs.length === 0) return [];
  const flag = (s: Summary) => (s.loadBound ? 'load-bound' : 'busy');
  const lines = pairs.map(({ name, baseline, ours, theirs }) => [
    `${name} vs ${baseline}`,
    ratio(ours.rps, theirs.rps),
    ratio(ours.cpuMicrosPerRequest, theirs.cpuMicrosPerRequest),
    `${percent(ours.hitRatio)} / ${percent(theirs.hitRatio)}`,
    `${flag(ours)} / ${flag(theirs)}`,
  ]);
  return [
    'This build over the baseline (CPU ratio < 1: this build is cheaper per request):',
    '',
    ...markdownTable(['rows', 'req/s ratio', 'CPU/req ratio', 'hit %', 'server'], lines),
    '',
  ];
}

function writeResults(
  input: ReportInput,
  summaries: ReadonlyMap<string, Summary>,
  targets: ReturnType<typeof checkTargets>,
): void {
  mkdirSync(input.resultsDir, { recursive: true });
  const json = JSON.stringify(
    {
      date: input.started.toISOString(),
      machine: input.machine,
      builds: input.builds,
      rows: input.rows.map((row) => {
        const s = summaries.get(row.name)!;
        const ref = summaries.get(row.ref);
        return {
          row: row.name,
          what: row.what,
          ref: row.ref,
          ...s,
          rpsVsRef: ref && s.rps / ref.rps,
          cpuVsRef: ref && s.cpuMicrosPerRequest / ref.cpuMicrosPerRequest,
          peakRssMb: row.peakRssMb,
          rounds: row.windows,
          warmUp: row.warmUp,
        };
      }),
      stampedes: input.stampedes,
      fixedRate: input.fixedRate && { rate: input.fixedRate.rate, ...input.fixedRate.result },
      targets,
    },
    null,
    2,
  );
  writeFileSync(join(input.resultsDir, 'latest.json'), `${json}\n`);
}

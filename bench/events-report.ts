import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Target } from './bench-targets.js';
import type { Window } from './measure-window.js';
import type { Arrivals } from './stream-load.js';
import { median, summarize, type Summary } from './summary.js';
import { markdownTable } from './text-table.js';

/*
 * What `npm run bench:events` prints and writes to bench/results/events-latest.json: one table
 * row per scenario (E1 fan-out, E2 fleet, E3 cost while idle), then the issue's targets.
 */

/** One gateway instance of a fan-out row. */
export interface InstanceFigures {
  label: string;
  /** Streams its gateway_event_streams reported once all were open. */
  streams: number;
  /** Its chat-events queue state (`polling`: it held the lease). */
  chatEvents: string | undefined;
  rssBeforeMb: number;
  rssOpenMb: number;
  /** JS heap used (its /metrics) before and with the streams open. */
  heapBeforeMb: number;
  heapOpenMb: number;
  peakRssMb: number;
}

export interface Delivery {
  /** Streams open when the folder was renamed. */
  armed: number;
  delivered: number;
  /** Deliveries whose list did not hold the new name. */
  unexpected: number;
  /** Streams that ended before their delivery. */
  ended: number;
  /** From the rename request to the change on the bus (chat event, refetch, cache write). */
  publishMs: number | undefined;
  firstMs: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface FanOutRow {
  name: string;
  what: string;
  /** Streams asked for, over all instances. */
  streams: number;
  /** Streams that got their first event, and how long opening them took in all. */
  opened: number;
  openFailures: Record<string, number>;
  openSeconds: number;
  instances: InstanceFigures[];
  delivery: Delivery;
  /** An instance that exited during the row: why (e.g. its heap ran out). */
  failure: string | undefined;
  /** The p99 target, ms. */
  p99TargetMs: number;
}

export interface IdleCostRow {
  name: string;
  what: string;
  streams: number;
  withStreams: Window[];
  without: Window[];
}

export interface EventsReportInput {
  started: Date;
  machine: string;
  fanOuts: FanOutRow[];
  /** E3, or why it was not measured. */
  idle: IdleCostRow | string;
  /** E3's method on the simplest server holding the same streams (R3e), when measured. */
  idleReference?: IdleCostRow | undefined;
  resultsDir: string;
}

/** RSS below which the gateway must stay with its streams open (issue 20). */
const RSS_TARGET_MB = 300;
/** G1 with idle streams open against without: within 10%. */
const IDLE_WITHIN = 0.9;

/**
 * With over without for each pair of adjacent windows (ABBA keeps each window with the streams
 * next to one without), the median over the pairs: this machine's speed drifts over minutes and
 * moves both windows of a pair alike, so the pair's ratio cancels it where a ratio of the two
 * kinds' medians does not.
 */
function pairedRatio(row: IdleCostRow, pick: (window: Window) => number): number {
  return median(
    row.withStreams.flatMap((on, i) => {
      const off = row.without[i];
      return off === undefined ? [] : [pick(on) / pick(off)];
    }),
  );
}

/** Throughput with the streams over without (by CPU per request where either is load-bound). */
function idleRatio(row: IdleCostRow, on: Summary, off: Summary) {
  const byCpu = on.loadBound || off.loadBound;
  return {
    byCpu,
    paired: byCpu
      ? 1 / pairedRatio(row, (w) => w.cpuMicrosPerRequest)
      : pairedRatio(row, (w) => w.rps),
    ofMedians: byCpu ? off.cpuMicrosPerRequest / on.cpuMicrosPerRequest : on.rps / off.rps,
  };
}

/** Nearest-rank percentile of ascending `sorted`. */
const percentile = (sorted: readonly number[], p: number) =>
  sorted.length === 0 ? Number.NaN : sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!;

export function deliveryOf(arrivals: Arrivals, sentAt: number, publishAt?: number): Delivery {
  const delays = arrivals.at.map((at) => at - sentAt).sort((a, b) => a - b);
  return {
    armed: arrivals.armed,
    delivered: delays.length,
    unexpected: arrivals.unexpected,
    ended: arrivals.ended,
    publishMs: publishAt === undefined ? undefined : publishAt - sentAt,
    firstMs: delays[0] ?? Number.NaN,
    p50Ms: percentile(delays, 0.5),
    p99Ms: percentile(delays, 0.99),
    maxMs: delays.at(-1) ?? Number.NaN,
  };
}

const int = (n: number | undefined) =>
  n === undefined || !Number.isFinite(n) ? '—' : Math.round(n).toString();
const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
/** KiB that each open stream added to RSS or to the JS heap, over all instances. */
const kibPerStream = (row: FanOutRow, of: 'rss' | 'heap') => {
  const added = row.instances.map((i) =>
    of === 'rss' ? i.rssOpenMb - i.rssBeforeMb : i.heapOpenMb - i.heapBeforeMb,
  );
  return (sum(added) * 1024) / Math.max(1, row.opened);
};
const fixed = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : '—');
const mbList = (row: FanOutRow, pick: (i: InstanceFigures) => number) =>
  row.instances.map((i) => fixed(pick(i))).join(' / ');

function fanOutLine(row: FanOutRow): string[] {
  const d = row.delivery;
  return [
    row.name,
    row.what,
    String(row.opened),
    `${d.delivered}/${d.armed}`,
    int(d.publishMs),
    int(d.firstMs),
    int(d.p50Ms),
    int(d.p99Ms),
    int(d.maxMs),
    mbList(row, (i) => i.rssBeforeMb),
    mbList(row, (i) => i.rssOpenMb),
    fixed(kibPerStream(row, 'rss'), 1),
    fixed(kibPerStream(row, 'heap'), 1),
    '—',
    '—',
  ];
}

function idleLine(row: IdleCostRow, on: Summary, off: Summary): string[] {
  return [
    row.name,
    row.what,
    String(row.streams),
    '—',
    '—',
    '—',
    '—',
    '—',
    '—',
    '—',
    '—',
    '—',
    '—',
    `${on.rps.toFixed(0)} / ${off.rps.toFixed(0)}`,
    `${on.cpuMicrosPerRequest.toFixed(0)} / ${off.cpuMicrosPerRequest.toFixed(0)}`,
  ];
}

const HEADER = [
  'row',
  'what',
  'streams',
  'delivered',
  'bus ms',
  'first ms',
  'p50 ms',
  'p99 ms',
  'max ms',
  'RSS before MB',
  'RSS open MB',
  'RSS KiB/stream',
  'heap KiB/stream',
  'G1 req/s with / without',
  'G1 CPU µs/req with / without',
];

function targetsOf(input: EventsReportInput, idle?: { on: Summary; off: Summary }): Target[] {
  const targets: Target[] = [];
  for (const row of input.fanOuts) {
    const d = row.delivery;
    const notes = [
      ...(d.unexpected > 0 ? [`${d.unexpected} without the new name`] : []),
      ...(row.failure ? [row.failure] : []),
    ];
    targets.push({
      what: `${row.name} every one of ${row.streams} streams gets the rename`,
      met: d.delivered === row.streams && d.unexpected === 0,
      value: [String(d.delivered), ...notes].join('; '),
    });
    targets.push({
      what: `${row.name} delivery p99 ≤ ${row.p99TargetMs} ms`,
      met: d.p99Ms <= row.p99TargetMs,
      value: `${fixed(d.p99Ms)} ms`,
    });
  }
  const e1 = input.fanOuts.find((r) => r.instances.length === 1);
  const rss = e1?.instances[0]?.rssOpenMb;
  if (e1 && rss !== undefined) {
    targets.push({
      what: `${e1.name} gateway RSS with ${e1.streams} streams open < ${RSS_TARGET_MB} MB`,
      met: e1.failure === undefined && e1.opened === e1.streams && rss < RSS_TARGET_MB,
      value: e1.failure ?? `${rss.toFixed(0)} MB (peak ${fixed(e1.instances[0]!.peakRssMb)})`,
    });
  }
  if (typeof input.idle === 'string') {
    targets.push({
      what: 'E3 G1 with idle streams within 10% of without',
      met: false,
      value: input.idle,
    });
  } else if (idle) {
    const name = `${input.idle.name} G1 with ${input.idle.streams} idle streams`;
    // Failed requests (a 429, a refused connection) are cheap: a window with any measures them.
    const errors = idle.on.errors + idle.off.errors;
    const target =
      errors > 0
        ? {
            what: `${name} within 10% of without`,
            met: false,
            value: `not measured: ${errors} failed requests in its windows`,
          }
        : idleTarget(name, input.idle, idle.on, idle.off);
    targets.push(target);
  }
  return targets;
}

function idleTarget(name: string, row: IdleCostRow, on: Summary, off: Summary): Target {
  const { byCpu, paired, ofMedians } = idleRatio(row, on, off);
  return {
    what: `${name} ≥ ${IDLE_WITHIN.toFixed(1)} × without`,
    met: paired >= IDLE_WITHIN,
    value: `${paired.toFixed(2)} by ${byCpu ? 'CPU per request (load-bound)' : 'req/s'}, the median over ${Math.min(row.withStreams.length, row.without.length)} adjacent pairs of windows (ratio of the two kinds' medians: ${ofMedians.toFixed(2)})`,
  };
}

/** A line on E3 or its reference: busy, p99, errors, and what the streams cost per request. */
function idleNote(row: IdleCostRow, on: Summary, off: Summary): string {
  const cpu = pairedRatio(row, (w) => w.cpuMicrosPerRequest);
  const rps = pairedRatio(row, (w) => w.rps);
  return `${row.name}: busy ${(on.busy * 100).toFixed(0)}% / ${(off.busy * 100).toFixed(0)}%, p99 ${on.p99Ms.toFixed(1)} / ${off.p99Ms.toFixed(1)} ms, errors ${on.errors} / ${off.errors}; with over without, median of adjacent pairs: CPU per request ${cpu.toFixed(3)}, req/s ${rps.toFixed(3)} (ratio of medians: CPU ${(on.cpuMicrosPerRequest / off.cpuMicrosPerRequest).toFixed(3)}, req/s ${(on.rps / off.rps).toFixed(3)})`;
}

export function reportEvents(input: EventsReportInput): Target[] {
  const [measured, skipped] =
    typeof input.idle === 'string' ? [undefined, input.idle] : [input.idle, undefined];
  const idle = measured && {
    on: summarize(measured.withStreams),
    off: summarize(measured.without),
  };
  const reference = input.idleReference && {
    row: input.idleReference,
    on: summarize(input.idleReference.withStreams),
    off: summarize(input.idleReference.without),
  };
  const lines = input.fanOuts.map(fanOutLine);
  if (measured && idle) lines.push(idleLine(measured, idle.on, idle.off));
  if (reference) lines.push(idleLine(reference.row, reference.on, reference.off));
  const targets = targetsOf(input, idle);
  const text = [
    `npm run bench:events, ${input.started.toISOString()}`,
    input.machine,
    'delivered: streams that got the renamed list; bus ms: rename request → the change published on Redis; first/p50/p99/max: rename request → the new channel_folders event read by the client, per stream; RSS (VmRSS) per instance before the streams were opened and with them open; RSS and heap KiB/stream: what the streams added to RSS and to the JS heap used (its nodejs_heap_size_used_bytes, garbage included), over the streams; G1: the hot search hit (wrk), median of the windows with the idle streams open / without; E3r: the same on the simplest server holding the same streams (bare Express 5 + one ioredis GET, bench/targets/bare-target.ts R3e).',
    '',
    ...markdownTable(HEADER, lines),
    '',
    ...input.fanOuts.map(
      (row) =>
        `${row.name}: ${row.opened} of ${row.streams} streams opened in ${row.openSeconds.toFixed(1)} s${Object.keys(row.openFailures).length > 0 ? ` (failed: ${JSON.stringify(row.openFailures)})` : ''}; ${row.instances.map((i) => `${i.label} ${fixed(i.streams)} open, chat events ${i.chatEvents ?? '—'}, peak RSS ${fixed(i.peakRssMb)} MB`).join('; ')}${row.failure ? `; ${row.failure}` : ''}`,
    ),
    ...(measured && idle
      ? [
          idleNote(measured, idle.on, idle.off),
          ...(reference
            ? [
                idleNote(reference.row, reference.on, reference.off),
                `${measured.name} over ${reference.row.name}, the gateway's idle-stream cost over what the same streams cost the simplest server: CPU per request ${(pairedRatio(measured, (w) => w.cpuMicrosPerRequest) / pairedRatio(reference.row, (w) => w.cpuMicrosPerRequest)).toFixed(3)}`,
              ]
            : []),
        ]
      : [`E3 ${skipped}`]),
    '',
    ...targets.map(({ what, met, value }) => `${met ? 'met   ' : 'MISSED'} ${what}: ${value}`),
    '',
  ].join('\n');
  process.stdout.write(text);
  mkdirSync(input.resultsDir, { recursive: true });
  const json = {
    date: input.started.toISOString(),
    machine: input.machine,
    fanOuts: input.fanOuts.map((row) => ({
      ...row,
      rssKibPerStream: kibPerStream(row, 'rss'),
      heapKibPerStream: kibPerStream(row, 'heap'),
    })),
    idle:
      measured && idle
        ? { ...measured, withSummary: idle.on, withoutSummary: idle.off }
        : input.idle,
    idleReference: reference
      ? { ...reference.row, withSummary: reference.on, withoutSummary: reference.off }
      : undefined,
    targets,
  };
  writeFileSync(join(input.resultsDir, 'events-latest.json'), `${JSON.stringify(json, null, 2)}\n`);
  return targets;
}

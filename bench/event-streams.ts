import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { RESERVED_DESCRIPTORS } from '../src/http/connection-cap.js';
import { repoRoot } from '../test/harness/chaos-processes.js';
import { hasWrk, load, type LoadOptions } from './bench-load.js';
import { startBareServer } from './bare-server.js';
import { hasTaskset, openFilesFor, type BenchProcess } from './bench-process.js';
import {
  activeFolder,
  deleteKeys,
  eventsNodeOptions,
  eventsMetrics,
  renameFolder,
  startEventsGateway,
  waitUntil,
  watchChangeBus,
  type BusWatch,
  type EventsGateway,
  type EventsGatewayOptions,
} from './events-gateway.js';
import {
  deliveryOf,
  reportEvents,
  type FanOutRow,
  type IdleCostRow,
  type InstanceFigures,
} from './events-report.js';
import { startSimulators, type Upstreams } from './gateway-env.js';
import { measureWindow, type Window } from './measure-window.js';
import { epochMs, startStreamLoad, type StreamLoad } from './stream-load.js';

/*
 * `npm run bench:events`: what `GET /api/events` (contract section 2.2) costs at scale, on
 * loopback. Gateways run as in production (node options of config/runtime.ts, the heap cap raised
 * to hold the streams: events-gateway.ts) on core 0 under a raised descriptor limit, on the
 * machine's Redis with a prefix of their own (deleted after);
 * one load client on core 1 holds the streams over raw sockets (targets/stream-client.ts), the
 * simulated upstreams share that core.
 *
 * E1 fan-out: BENCH_STREAMS streams on one gateway, then a folder renamed on the chat
 *   simulator: per stream, the time from the rename request to the new list read off its
 *   socket; the gateway's RSS before and with the streams open.
 * E2 fleet: two gateways on the same Redis and prefix (the chat-events lease picks which one
 *   follows the chat server), half the streams on each, the same rename.
 * E3 cost while idle: the hot search hit (bench.ts's G1, wrk on core 1) on E1's gateway with its
 *   streams open and without, in alternating windows (ABBA), the median of each kept; after
 *   each opening or closing of the streams, a window of load that is not measured. Judged by
 *   the median over adjacent pairs of windows (events-report.ts, pairedRatio).
 * E3r E3's reference: the same on the simplest server holding the same streams (bare Express 5
 *   sending the answer it GETs from Redis, bench/targets/bare-target.ts R3e): what idle
 *   connections cost any Node server on this machine, beside what they cost the gateway.
 *
 * BENCH_STREAMS (default 10000), BENCH_SECONDS, BENCH_ROUNDS (E3's windows of each kind, default
 * 6: a 10% effect on this shared machine needs them) and BENCH_CONNECTIONS as in bench.ts.
 */

const STREAMS = Number(process.env['BENCH_STREAMS'] ?? 10_000);
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 5);
const ROUNDS = Math.max(1, Number(process.env['BENCH_ROUNDS'] ?? 6));
const CONNECTIONS = Number(process.env['BENCH_CONNECTIONS'] ?? 50);
const REDIS_URL = process.env['BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379/0';
const SEARCH = '/api/search?q=wireless+headphones&k=10';
const SERVER_CORE = 0;
const LOAD_CORE = 1;
/** What the gateways and the client ask for; where refused, they get the hard limit. */
const OPEN_FILES = 65_536;
const SETTLE_MS = 2000;
/** E3's warm-up: a window's length (2 s, as bench.ts warms, left its first window an outlier). */
const WARM_UP_SECONDS = SECONDS;
const OPEN_TIMEOUT_MS = 180_000;
const DELIVERY_TIMEOUT_MS = 30_000;
/** How long a gateway may take to show every stream open, or closed, in its metrics. */
const METRICS_TIMEOUT_MS = 30_000;

const log = (line: string) => process.stdout.write(`${line}\n`);

/** What every row shares: the simulators, the load client, the bus watch and the limits. */
interface Context {
  upstreams: Upstreams;
  client: StreamLoad;
  bus: BusWatch;
  gatewayOptions(label: string, keyPrefix: string): EventsGatewayOptions;
  started: BenchProcess[];
}

async function main(): Promise<void> {
  if (!Number.isInteger(STREAMS) || STREAMS < 2) throw new Error('BENCH_STREAMS: an integer ≥ 2');
  if (hasTaskset) execFileSync('taskset', ['-p', '-c', String(LOAD_CORE), String(process.pid)]);
  const started = new Date();
  const prefix = `bench:events:${randomUUID()}:`;
  const openFiles = openFilesFor(OPEN_FILES);
  // The gateway refuses a connection cap that leaves it fewer than its reserve of descriptors.
  const maxConnections = Math.min(20_000, openFiles - RESERVED_DESCRIPTORS);
  const maxStreams = Math.max(12_000, Math.ceil(STREAMS * 1.2));
  if (maxStreams >= maxConnections || STREAMS + 1024 > openFiles) {
    throw new Error(
      `descriptor limit ${openFiles} is too low for ${STREAMS} streams (MAX_CONNECTIONS ${maxConnections}, EVENTS_MAX_STREAMS ${maxStreams})`,
    );
  }
  const processes: BenchProcess[] = [];
  const keep = <T extends { process: BenchProcess }>(owner: T): T => {
    processes.push(owner.process);
    return owner;
  };
  const bus = await watchChangeBus(REDIS_URL, prefix);
  try {
    const { upstreams } = keep(await startSimulators(LOAD_CORE));
    const client = keep(
      await startStreamLoad({
        core: LOAD_CORE,
        openFiles: OPEN_FILES,
        openTimeoutMs: OPEN_TIMEOUT_MS,
      }),
    );
    const context: Context = {
      upstreams,
      client,
      bus,
      started: processes,
      gatewayOptions: (label, keyPrefix) => ({
        label,
        upstreams,
        core: SERVER_CORE,
        openFiles: OPEN_FILES,
        redisUrl: REDIS_URL,
        keyPrefix,
        maxStreams,
        maxConnections,
      }),
    };

    const single = await startGateways(context, ['E1'], `${prefix}e1:`);
    const e1 = await fanOut(context, {
      name: 'E1',
      what: `fan-out: ${STREAMS} streams on one gateway, one folder renamed`,
      gateways: single,
      p99TargetMs: 1000,
    });
    // E3 needs E1's gateway holding its streams: not measured when it could not.
    const e3 =
      e1.failure === undefined
        ? await idleCost(context, single[0]!, {
            name: 'E3',
            what: `cost while idle: G1 hot hit with ${STREAMS} idle streams open / without`,
          })
        : undefined;
    const answer = e3 ? await answerFile(single[0]!) : undefined;
    await stopAll(context, single);
    await client.closeAll();
    // E3's reference: what the same idle streams cost the simplest server that holds them.
    const e3Reference = answer === undefined ? undefined : await referenceCost(context, answer);

    const fleet = await startGateways(context, ['E2a', 'E2b'], `${prefix}e2:`);
    const e2 = await fanOut(context, {
      name: 'E2',
      what: `fleet: 2 gateways on one Redis, ${Math.floor(STREAMS / 2)} streams each, one rename`,
      gateways: fleet,
      p99TargetMs: 2000,
    });
    await stopAll(context, fleet);

    reportEvents({
      started,
      machine: `${cpus()[0]?.model ?? 'cpu'} × ${cpus().length}, Node ${process.version}, ${hasTaskset ? 'gateways on core 0, stream client, simulators and wrk on core 1' : 'unpinned'}, gateway node ${eventsNodeOptions(maxStreams).join(' ') || '(defaults)'}, descriptor limit ${openFiles}${openFiles < OPEN_FILES ? ` (${OPEN_FILES} refused)` : ''}, MAX_CONNECTIONS ${maxConnections}, EVENTS_MAX_STREAMS ${maxStreams}; E3: ${hasWrk ? 'wrk' : 'autocannon'} -c${CONNECTIONS}, ${SECONDS} s windows, ${ROUNDS} of each`,
      fanOuts: [e1, e2],
      idle: e3 ?? `not measured: ${e1.failure}`,
      idleReference: e3Reference,
      resultsDir: join(repoRoot(), 'bench', 'results'),
    });
  } finally {
    await Promise.all(processes.reverse().map((p) => p.stop()));
    bus.close();
    await deleteKeys(REDIS_URL, prefix);
  }
}

async function startGateways(
  context: Context,
  labels: readonly string[],
  keyPrefix: string,
): Promise<EventsGateway[]> {
  const gateways: EventsGateway[] = [];
  for (const label of labels) {
    const gateway = await startEventsGateway(context.gatewayOptions(label, keyPrefix));
    context.started.push(gateway.process);
    gateways.push(gateway);
  }
  return gateways;
}

async function stopAll(context: Context, gateways: readonly EventsGateway[]) {
  for (const gateway of gateways) {
    await gateway.process.stop();
    context.started.splice(context.started.indexOf(gateway.process), 1);
  }
}

/**
 * Which of `gateways` have exited, each with its exit status and the fatal line of its stderr
 * (a heap out of memory, say); undefined while all run.
 */
function crashOf(gateways: readonly EventsGateway[]): string | undefined {
  const crashes = gateways.flatMap((gateway) => {
    const exited = gateway.process.exited();
    if (exited === undefined) return [];
    const fatal = /FATAL ERROR: .*/.exec(exited)?.[0];
    return [fatal ? `${exited.slice(0, exited.indexOf(':'))}: ${fatal}` : exited.slice(0, 300)];
  });
  return crashes.length > 0 ? crashes.join('; ') : undefined;
}

/** Metrics of each gateway; undefined for one that does not answer (it has exited). */
const metricsOf = (gateways: readonly EventsGateway[]) =>
  Promise.all(gateways.map((g) => eventsMetrics(g).catch(() => undefined)));

/** Opens `count` streams on each gateway and waits until each gateway counts them. */
async function openStreams(context: Context, gateways: readonly EventsGateway[], count: number) {
  let opened = 0;
  const failures: Record<string, number> = {};
  const start = epochMs();
  for (const gateway of gateways) {
    const result = await context.client.open(gateway.port, count);
    opened += result.opened;
    for (const [why, n] of Object.entries(result.failures))
      failures[why] = (failures[why] ?? 0) + n;
    // Times come over IPC as JSON: with no stream opened they are null, not NaN.
    const ms = (value: number | null) => (value === null ? '—' : value.toFixed(0));
    const wait = result.firstEventMs;
    const failed = Object.keys(result.failures).length > 0;
    log(
      `${gateway.label}: ${result.opened} of ${count} streams open in ${(result.ms / 1000).toFixed(1)} s (connect to first event: p50 ${ms(wait.p50)} ms, p99 ${ms(wait.p99)} ms, max ${ms(wait.max)} ms)${failed ? `; failed: ${JSON.stringify(result.failures)}` : ''}${crashOf([gateway]) ?? ''}`,
    );
  }
  const perGateway = opened / gateways.length;
  await waitUntil(
    `gateway_event_streams = ${perGateway}`,
    async () =>
      crashOf(gateways) !== undefined ||
      (await metricsOf(gateways)).every((m) => m?.streams === perGateway),
    METRICS_TIMEOUT_MS,
  ).catch((error: unknown) => log(String(error)));
  return { opened, failures, seconds: (epochMs() - start) / 1000 };
}

async function fanOut(
  context: Context,
  row: { name: string; what: string; gateways: EventsGateway[]; p99TargetMs: number },
): Promise<FanOutRow> {
  const { gateways } = row;
  const perGateway = Math.floor(STREAMS / gateways.length);
  await waitUntil(
    'the chat-events lease holder to poll',
    async () => (await metricsOf(gateways)).some((m) => m?.chatEvents === 'polling'),
    METRICS_TIMEOUT_MS,
  );
  const folder = await activeFolder(gateways[0]!);
  await sleep(SETTLE_MS);
  const before = await metricsOf(gateways);
  const rssBefore = gateways.map((g) => g.process.rssMb());
  const open = await openStreams(context, gateways, perGateway);
  await sleep(SETTLE_MS);
  const after = await metricsOf(gateways);
  const instances: InstanceFigures[] = gateways.map((g, i) => ({
    label: g.label,
    streams: after[i]?.streams ?? Number.NaN,
    chatEvents: after[i]?.chatEvents,
    rssBeforeMb: rssBefore[i]!,
    rssOpenMb: g.process.rssMb(),
    heapBeforeMb: before[i]?.heapUsedMb ?? Number.NaN,
    heapOpenMb: after[i]?.heapUsedMb ?? Number.NaN,
    peakRssMb: Number.NaN,
  }));

  // Renamed even when an instance has died: the streams of the others still count.
  const name = `bench ${row.name} ${randomUUID().slice(0, 8)}`;
  await context.client.arm(name);
  const sentAt = epochMs();
  await renameFolder(context.upstreams, folder.id, name);
  const arrivals = await context.client.collect(DELIVERY_TIMEOUT_MS);
  const delivery = deliveryOf(arrivals, sentAt, context.bus.firstAfter(sentAt, 'active'));
  for (const [i, g] of gateways.entries()) instances[i]!.peakRssMb = g.process.peakRssMb();
  const failure = crashOf(gateways);
  log(
    `${row.name}: "${folder.name}" renamed; ${delivery.delivered} of ${delivery.armed} streams got it, p50 ${delivery.p50Ms.toFixed(0)} ms, p99 ${delivery.p99Ms.toFixed(0)} ms, max ${delivery.maxMs.toFixed(0)} ms${failure ? `; ${failure}` : ''}`,
  );
  return {
    name: row.name,
    what: row.what,
    streams: perGateway * gateways.length,
    opened: open.opened,
    openFailures: open.failures,
    openSeconds: open.seconds,
    instances,
    delivery,
    failure,
    p99TargetMs: row.p99TargetMs,
  };
}

/** ABBA order over the rounds: with, without, without, with, with, without, … */
function abba(rounds: number): boolean[] {
  return Array.from({ length: rounds }, (_, r) =>
    r % 2 === 0 ? [true, false] : [false, true],
  ).flat();
}

/** The gateway's hot answer in a file: the bytes the reference server sends. */
async function answerFile(gateway: EventsGateway): Promise<string> {
  const body = Buffer.from(await (await fetch(`${gateway.origin}${SEARCH}`)).arrayBuffer());
  const file = join(mkdtempSync(join(tmpdir(), 'bench-events-body-')), 'body.json');
  writeFileSync(file, body);
  return file;
}

/**
 * E3r: E3's method on bench.ts's R3 (bare Express 5 sending the answer it GETs from Redis) that
 * also holds the streams (R3e): what 10,000 idle connections cost any Node server on this
 * machine (its kernel, its collector), beside what they cost the gateway.
 */
async function referenceCost(context: Context, bodyFile: string): Promise<IdleCostRow> {
  const bare = await startBareServer({
    row: 'R3e',
    bodyFile,
    dependency: REDIS_URL,
    core: SERVER_CORE,
    openFiles: OPEN_FILES,
  });
  const server: EventsGateway = { label: 'E3r', ...bare };
  context.started.push(bare.process);
  try {
    await openStreams(context, [server], STREAMS);
    return await idleCost(context, server, {
      name: 'E3r',
      what: `E3 on bare Express 5 + one ioredis GET holding ${STREAMS} streams the same way`,
    });
  } finally {
    await stopAll(context, [server]);
    rmSync(dirname(bodyFile), { recursive: true, force: true });
  }
}

/** E3 on `gateway`, whose STREAMS streams are open when it starts. */
async function idleCost(
  context: Context,
  gateway: EventsGateway,
  row: Pick<IdleCostRow, 'name' | 'what'>,
): Promise<IdleCostRow> {
  const url = `${gateway.origin}${SEARCH}`;
  const options = (seconds: number): LoadOptions => ({
    url,
    seconds,
    connections: CONNECTIONS,
    paths: { kind: 'same' },
    core: LOAD_CORE,
  });
  await fetch(url); // fill the cache
  await load(options(WARM_UP_SECONDS));
  const windows: Record<'with' | 'without', Window[]> = { with: [], without: [] };
  let open = true;
  for (const withStreams of abba(ROUNDS)) {
    if (withStreams && !open) await openStreams(context, [gateway], STREAMS);
    if (!withStreams && open) {
      await context.client.closeAll();
      await waitUntil(
        'gateway_event_streams = 0',
        async () => (await eventsMetrics(gateway)).streams === 0,
        METRICS_TIMEOUT_MS,
      );
    }
    if (withStreams !== open) {
      // Opening or closing 10,000 streams leaves work behind (their garbage, a full GC, the
      // heap resized): a window of load, not measured, so that each measured window sees the
      // steady state of idle streams open, or none.
      await sleep(SETTLE_MS);
      const settling = await measureWindow(gateway, () => load(options(WARM_UP_SECONDS)));
      log(
        `${row.name} settling after ${withStreams ? 'opening' : 'closing'} the streams (not counted): ${settling.rps.toFixed(0)} req/s, ${settling.cpuMicrosPerRequest.toFixed(0)} µs/req`,
      );
    }
    open = withStreams;
    await sleep(SETTLE_MS);
    const window = await measureWindow(gateway, () => load(options(SECONDS)));
    windows[withStreams ? 'with' : 'without'].push(window);
    log(
      `${row.name} ${withStreams ? `with ${STREAMS} streams` : 'without streams'}: ${window.rps.toFixed(0)} req/s, ${window.cpuMicrosPerRequest.toFixed(0)} µs/req, busy ${(window.busy * 100).toFixed(0)}%`,
    );
  }
  if (open) await context.client.closeAll();
  return {
    ...row,
    streams: STREAMS,
    withStreams: windows.with,
    without: windows.without,
  };
}

// A stop by Ctrl-C still runs the exit hook that kills every child (bench-process.ts).
process.once('SIGINT', () => process.exit(130));
await main();

import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { GATEWAY_ENVIRONMENT } from '../config/runtime.js';
import { freePort, repoRoot } from '../test/harness/chaos-processes.js';
import { startRedisCluster, type RedisCluster } from '../test/harness/redis-topologies.js';
import { prepareBaseline, type BaselineBuild } from './baseline-build.js';
import { hasWrk, load, loadAtRate, type LoadOptions, type PathPlan } from './bench-load.js';
import { hasTaskset, startProcess, type BenchProcess } from './bench-process.js';
import { report } from './bench-report.js';
import { coldStampede, type Stampede } from './cold-stampede.js';
import { deleteKeys } from './events-gateway.js';
import {
  GATEWAY_ENTRY,
  GATEWAY_NODE_OPTIONS,
  SEARCH_TOKEN as TOKEN,
  gatewayEnv,
  startSimulators,
} from './gateway-env.js';
import { measureWindow, type Window } from './measure-window.js';
import { createQueryMix } from './query-mix.js';
import { summarize } from './summary.js';
import { startBareServer, startHandWrittenSearch } from './bare-server.js';

/*
 * `npm run bench`: rows measured side by side in one run on loopback. Each server runs in its
 * own process on core 0, the load generator on core 1 (when taskset exists); every row is
 * warmed up, then measured in alternating rounds, and each figure's median over the rounds is
 * kept. Per row: req/s and the server's CPU per request, each as a ratio to the row's reference
 * row from the same run (absolute numbers vary with the machine, ratios far less), how busy the
 * server's core was, and whether the load side limited it (then only the CPU ratio compares).
 *
 * BENCH_SECONDS, BENCH_ROUNDS and BENCH_CONNECTIONS shorten a smoke run; BENCH_ROWS=G3,G7 measures
 * those rows and the reference rows their ratios divide by; BENCH_CLUSTER=off skips the Redis
 * Cluster rows; BENCH_BASELINE=<git rev> builds that revision beside this one (baseline-build.ts)
 * and measures every gateway row on both builds in alternation, its rows named `G3@<commit>`;
 * BENCH_BASELINE_NODE_OPTIONS starts the baseline's gateways with other node options (default:
 * this build's), so that BENCH_BASELINE=HEAD compares two settings of V8 on the same code, and
 * BENCH_BASELINE_ENVIRONMENT with another process environment (`NAME=value` pairs, '' for none;
 * default: this build's GATEWAY_ENVIRONMENT);
 * BENCH_PAIRED=on loads each row and its twin at the same time (batchesOf).
 */

const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 5);
const ROUNDS = Math.max(1, Number(process.env['BENCH_ROUNDS'] ?? 3));
const CONNECTIONS = Number(process.env['BENCH_CONNECTIONS'] ?? 50);
const REDIS_URL = process.env['BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379/0';
const ONLY = process.env['BENCH_ROWS']?.split(',').filter(Boolean);
const CLUSTER = process.env['BENCH_CLUSTER'] !== 'off';
const BASELINE = process.env['BENCH_BASELINE'];
/** With a baseline: measure each row and its twin in the same window (batchesOf). */
const PAIRED = process.env['BENCH_PAIRED'] === 'on';
const BASELINE_NODE_OPTIONS =
  process.env['BENCH_BASELINE_NODE_OPTIONS']?.split(' ').filter(Boolean) ?? GATEWAY_NODE_OPTIONS;
/** `NAME=value` pairs, space-separated; '' for none. Default: this build's. */
const BASELINE_ENVIRONMENT: Readonly<Record<string, string>> =
  process.env['BENCH_BASELINE_ENVIRONMENT'] === undefined
    ? GATEWAY_ENVIRONMENT
    : Object.fromEntries(
        process.env['BENCH_BASELINE_ENVIRONMENT']
          .split(' ')
          .filter(Boolean)
          .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
      );
const SEARCH = '/api/search?q=wireless+headphones&k=10';
const SERVER_CORE = 0;
const SETTLE_MS = 2000;
/**
 * Load before a row's first window (BENCH_WARM_SECONDS, default 10), measured and printed as
 * the row's warm-up CPU, not in its medians. TurboFan takes ~10 s of misses to compile the
 * gateway's miss path on this machine (--trace-opt). With 2 s (the default until 2026-11-28)
 * G3's first round cost 2,002 µs against 1,359 and 1,206 in the next two; with 10 s, 1,504
 * against 1,404 and 1,221 (its warm-up itself 1,215), H 838-1,053 throughout
 * (docs/log/measurements.md). A gateway runs for hours: the rounds measure the process it then
 * is, and the warm-up column what a freshly started one (a deploy, a scale-out) pays first.
 */
const WARM_UP_SECONDS = Number(process.env['BENCH_WARM_SECONDS'] ?? 10);
/**
 * Unmeasured load right before each window (BENCH_PRIME_SECONDS, default 3). Between its
 * windows a row waits while every other row is measured. A server started with Node's defaults
 * (the reference rows: a team's own route runs as `node server.js`) then lets V8's memory
 * reducer shrink its heap, and its next window paid for growing it back: without the prime H
 * cost 716-909 µs per request, 120-186 of them off the main thread, in two runs of
 * 2026-11-28; with it 598-685 (53-65) in two runs the same hour and 624-824 (61-87) in a third
 * (docs/log/measurements.md). The gateway runs with --no-memory-reducer (config/runtime.ts)
 * and did not pay, so the ratios to H flattered it. With the prime each window measures
 * a server under steady load, as a gateway and its peer are in production.
 */
const PRIME_SECONDS = Number(process.env['BENCH_PRIME_SECONDS'] ?? 3);
const LOAD_CORE = 1;
/**
 * G7's searches: Zipf (s = 1) over 5,000 queries, the cache cold again every 2,000 requests:
 * 61% hits by design over whole epochs, 53% over a window of only 1,000 requests.
 */
const MIX = createQueryMix({
  distinct: 5000,
  exponent: 1,
  epochLength: 2000,
  epochs: 50,
  seed: 18,
});

/** What a current browser sends on every request. */
const BROWSER_ENCODINGS = 'gzip, deflate, br, zstd';

interface Server {
  process: BenchProcess;
  origin: string;
}

interface RowSpec {
  name: string;
  what: string;
  /** The row its ratios divide by: a bare server doing the same part of the job. */
  ref: string;
  path: string;
  plan: PathPlan['kind'];
  /** Request headers the load sends (default none beyond the load generator's own). */
  headers?: Readonly<Record<string, string>>;
}

interface BareRowSpec extends RowSpec {
  /** What bare-target.ts calls besides answering; `hand` is the hand-written search route. */
  dependency: 'redis' | 'search' | 'none' | 'hand';
}

interface GatewayRowSpec extends RowSpec {
  /** The gateway's environment beyond the common one; `prefix` is its build's Redis key prefix. */
  env(prefix: string): Record<string, string>;
}

/** Unless a row says otherwise: the hot search, every request the same, divided by R2. */
type Defaults = 'ref' | 'path' | 'plan';
const DEFAULTS = { ref: 'R2', path: SEARCH, plan: 'same' } as const;
const bareRow = (row: Omit<BareRowSpec, Defaults> & Partial<RowSpec>): BareRowSpec => ({
  ...DEFAULTS,
  ...row,
});
const gatewayRow = (row: Omit<GatewayRowSpec, Defaults> & Partial<RowSpec>): GatewayRowSpec => ({
  ...DEFAULTS,
  ...row,
});

/** A build of the gateway: this one (no suffix) or the baseline's. */
interface Build {
  suffix: string;
  entry: string;
  keyPrefix: string;
  nodeOptions: readonly string[];
  /** The process environment config/runtime.ts gives the gateway (GATEWAY_ENVIRONMENT). */
  environment: Readonly<Record<string, string>>;
}

interface Row extends RowSpec {
  server: Server;
  isGateway: boolean;
  /** On a baseline row: the name of the same row on this build. */
  baselineOf?: string;
  windows: Window[];
  /** The load before the first window, measured apart from the rounds. */
  warmUp?: Window;
}

const BARE_ROWS: BareRowSpec[] = [
  bareRow({ name: 'R1', what: 'bare node:http, same bytes', dependency: 'none' }),
  bareRow({ name: 'R2', what: 'bare Express 5, same bytes', dependency: 'none' }),
  bareRow({ name: 'R3', what: 'bare Express 5 + one ioredis GET', dependency: 'redis' }),
  bareRow({
    name: 'R4',
    what: 'bare Express 5 + one undici call to the search simulator',
    dependency: 'search',
    plan: 'unique',
  }),
  bareRow({
    name: 'H',
    what: 'the search route written by hand (Express 5, ioredis, zod, undici), every query a miss',
    dependency: 'hand',
    ref: 'R4',
    plan: 'unique',
  }),
];

const root = repoRoot();

async function main(): Promise<void> {
  if (hasTaskset) execFileSync('taskset', ['-p', '-c', String(LOAD_CORE), String(process.pid)]);
  const started = new Date();
  const prefix = `bench:${randomUUID()}:`;
  const processes: BenchProcess[] = [];
  const keep = (p: BenchProcess) => (processes.push(p), p);
  const sink = await startOtlpSink();
  let cluster: RedisCluster | undefined;
  let baseline: BaselineBuild | undefined;
  /** Where the bare rows' body file is, removed with everything else the run made. */
  let bodyDir: string | undefined;
  try {
    baseline = BASELINE === undefined ? undefined : prepareBaseline(BASELINE, root);
    const builds: Build[] = [
      {
        suffix: '',
        entry: GATEWAY_ENTRY,
        keyPrefix: prefix,
        nodeOptions: GATEWAY_NODE_OPTIONS,
        environment: GATEWAY_ENVIRONMENT,
      },
      ...(baseline
        ? [
            {
              suffix: `@${baseline.commit}`,
              entry: baseline.entry,
              keyPrefix: `${prefix}base:`,
              nodeOptions: BASELINE_NODE_OPTIONS,
              environment: BASELINE_ENVIRONMENT,
            },
          ]
        : []),
    ];
    const simulators = await startSimulators(LOAD_CORE);
    const sims = keep(simulators.process);
    const upstreams = simulators.upstreams;
    const redis = (keyPrefix: string, extra: Record<string, string> = {}) => ({
      REDIS_URL,
      REDIS_KEY_PREFIX: keyPrefix,
      ...extra,
    });
    const onCluster = (keyPrefix: string) => ({
      REDIS_CLUSTER_NODES: cluster!.seeds,
      REDIS_KEY_PREFIX: keyPrefix,
      SESSION_SECRET: 'bench-session-secret-0123456789abcdef',
    });
    const gatewayRows: GatewayRowSpec[] = [
      gatewayRow({
        name: 'G1',
        what: 'gateway, hot hit from Redis, rate limiter on',
        env: (p) => redis(`${p}g1:`),
      }),
      // The same hit as a browser asks for it: compressed bytes stored with the entry.
      gatewayRow({
        name: 'G1z',
        what: `G1 with a browser's Accept-Encoding (${BROWSER_ENCODINGS})`,
        headers: { 'Accept-Encoding': BROWSER_ENCODINGS },
        env: (p) => redis(`${p}g1:`),
      }),
      gatewayRow({
        name: 'G1x',
        what: 'G1 with METRICS=off',
        env: (p) => redis(`${p}g1:`, { METRICS: 'off' }),
      }),
      // What tracing costs on the hit path: every request sampled, spans exported to a
      // collector stand-in that accepts and drops them.
      gatewayRow({
        name: 'G1t',
        what: 'G1 traced: every request sampled, spans exported over OTLP',
        env: (p) => redis(`${p}g1:`, { OTEL_EXPORTER_OTLP_ENDPOINT: sink.origin }),
      }),
      gatewayRow({
        name: 'G1m',
        what: 'gateway, hot hit from the in-process store',
        env: () => ({}),
      }),
      gatewayRow({
        name: 'G3',
        what: 'gateway, every search a miss (Redis)',
        ref: 'H',
        plan: 'unique',
        env: (p) => redis(`${p}g3:`),
      }),
      // A realistic mix: its cost is mostly its misses, hence the hand-written route as its peer.
      gatewayRow({
        name: 'G7',
        what: `gateway, Zipf mix of ${MIX.distinct} searches (s=${MIX.exponent}, cache cold every ${MIX.epochLength}: ${(MIX.designedHitRatio * 100).toFixed(0)}% hits by design)`,
        ref: 'H',
        plan: 'mix',
        env: (p) => redis(`${p}g7:`),
      }),
      ...(CLUSTER
        ? [
            gatewayRow({
              name: 'G6',
              what: 'gateway, hot hit from a Redis Cluster (one of two instances)',
              env: (p) => onCluster(`${p}g6:`),
            }),
          ]
        : []),
      gatewayRow({
        name: 'G4',
        what: 'gateway, channel folders hit (Redis)',
        path: '/api/chat/channel-folders',
        env: (p) => redis(`${p}g4:`),
      }),
    ];
    const [bareSpecs, gatewaySpecs] = select(BARE_ROWS, gatewayRows);

    const servers = new Map<string, Promise<Server>>();
    const startGateway = (label: string, build: Build, env: Record<string, string>) => {
      const server = async () => {
        const port = await freePort();
        const p = keep(
          await startProcess([...build.nodeOptions, build.entry], {
            env: gatewayEnv(port, upstreams, env, build.environment),
            core: SERVER_CORE,
            label,
          }),
        );
        return { process: p, origin: `http://127.0.0.1:${port}` };
      };
      if (!servers.has(label)) servers.set(label, server());
      return servers.get(label)!;
    };
    const gatewayOf = (spec: GatewayRowSpec, build: Build) =>
      startGateway(`${spec.name}${build.suffix}`, build, spec.env(build.keyPrefix));

    // The exact bytes of a hot answer from this build's G1: what the bare rows send.
    const g1 = await gatewayOf(
      gatewayRows.find((r) => r.name === 'G1')!,
      builds[0]!,
    );
    const body = Buffer.from(await (await fetch(`${g1.origin}${SEARCH}`)).arrayBuffer());
    bodyDir = mkdtempSync(join(tmpdir(), 'bench-body-'));
    const bodyFile = join(bodyDir, 'body.json');
    writeFileSync(bodyFile, body);
    const dependencies = { redis: REDIS_URL, search: upstreams.searchOrigin, none: '' };
    const bare = async (spec: BareRowSpec): Promise<Server> => {
      if (spec.dependency === 'hand') {
        const hand = await startHandWrittenSearch({
          redisUrl: REDIS_URL,
          searchOrigin: upstreams.searchOrigin,
          token: TOKEN,
          keyPrefix: `${prefix}h:`,
          cursorSecret: 'bench-cursor-secret-0123456789abcdef',
          core: SERVER_CORE,
        });
        keep(hand.process);
        await sameAnswers(g1.origin, hand.origin);
        return hand;
      }
      const server = await startBareServer({
        row: spec.name,
        bodyFile,
        dependency: dependencies[spec.dependency],
        token: TOKEN,
        core: SERVER_CORE,
      });
      keep(server.process);
      return server;
    };

    // The cluster rows start six more redis-server processes: only when G6 is measured.
    if (gatewaySpecs.some((r) => r.name === 'G6')) cluster = await startRedisCluster();
    const rows: Row[] = [];
    for (const spec of bareSpecs) {
      rows.push({ ...spec, server: await bare(spec), isGateway: false, windows: [] });
    }
    for (const spec of gatewaySpecs) {
      for (const build of builds) {
        rows.push({
          ...spec,
          name: `${spec.name}${build.suffix}`,
          server: await gatewayOf(spec, build),
          isGateway: true,
          ...(build.suffix ? { baselineOf: spec.name } : {}),
          windows: [],
        });
      }
    }

    for (const row of rows) {
      await fetch(`${row.server.origin}${row.path}`); // fill the cache
      row.warmUp = await measureWindow(row.server, () =>
        load(loadOptions(row, WARM_UP_SECONDS, 'warm')),
      );
    }
    const measured = besideTheirPeers(rows);
    for (let round = 1; round <= ROUNDS; round += 1) {
      for (const batch of batchesOf(inRoundOrder(measured, round))) {
        // The previous row's server collects its garbage once its load stops, on the same core:
        // let it settle so that it does not bill the next row.
        await sleep(SETTLE_MS);
        if (PRIME_SECONDS > 0) {
          await Promise.all(batch.map((row) => load(loadOptions(row, PRIME_SECONDS, `p${round}`))));
        }
        // Both builds' rows of a round send the same sequence (the mix's salt is the round's).
        const windows = await Promise.all(
          batch.map((row) =>
            measureWindow(row.server, () => load(loadOptions(row, SECONDS, `w${round}`))),
          ),
        );
        batch.forEach((row, i) => {
          const window = windows[i]!;
          row.windows.push(window);
          process.stdout.write(
            `round ${round} ${row.name}: ${window.rps.toFixed(0)} req/s, ${window.cpuMicrosPerRequest.toFixed(0)} µs/req (${window.offMainMicrosPerRequest.toFixed(0)} off the main thread), busy ${(window.busy * 100).toFixed(0)}%${batch.length > 1 ? ' (paired)' : ''}\n`,
          );
        });
      }
    }

    // G1z's bytes on the wire against the identity body (issue 18: at most 15%).
    const zipped = rows.find((r) => r.name === 'G1z');
    let g1zWireShare: number | undefined;
    if (zipped) {
      const sized = async (headers: Record<string, string>) => {
        const res = await fetch(`${zipped.server.origin}${zipped.path}`, { headers });
        return {
          coding: res.headers.get('content-encoding') ?? 'identity',
          bytes: Number(res.headers.get('content-length')),
        };
      };
      const identity = await sized({ 'Accept-Encoding': 'identity' });
      const browser = await sized({ 'Accept-Encoding': BROWSER_ENCODINGS });
      g1zWireShare = browser.bytes / identity.bytes;
      process.stdout.write(
        `G1z bytes on the wire: ${browser.bytes} (${browser.coding}) of ${identity.bytes} identity = ${((browser.bytes / identity.bytes) * 100).toFixed(1)}%\n`,
      );
    }
    const stampedes: Stampede[] = [];
    for (const build of builds) {
      // G5: a fresh gateway; G6: two instances of one deployment on the Redis Cluster.
      const g5 = await startGateway(`G5${build.suffix}`, build, redis(`${build.keyPrefix}g5:`));
      stampedes.push(await coldStampede(`G5${build.suffix}`, [g5.origin], sims));
      if (cluster) {
        const fleet = await Promise.all(
          ['G6', 'G6b'].map((name) =>
            startGateway(`${name}${build.suffix}`, build, onCluster(`${build.keyPrefix}g6:`)),
          ),
        );
        const urls = fleet.map((s) => s.origin);
        stampedes.push(await coldStampede(`G6${build.suffix}`, urls, sims));
      }
    }
    // G1 at a fixed rate, half its throughput: its latency when not saturated.
    const hot = rows.find((r) => r.name === 'G1');
    const rate = hot ? Math.round(summarize(hot.windows).rps / 2) : 0;
    const fixedRate =
      hot && rate > 0
        ? { name: hot.name, rate, result: await loadAtRate(loadOptions(hot, SECONDS, ''), rate) }
        : undefined;
    report({
      started,
      machine: `${cpus()[0]?.model ?? 'cpu'} × ${cpus().length}, Node ${process.version}, ${hasWrk ? 'wrk' : 'autocannon'} -c${CONNECTIONS}, ${SECONDS} s × ${ROUNDS} rounds, ${hasTaskset ? 'server on core 0, load on core 1' : 'unpinned'}${GATEWAY_NODE_OPTIONS.length > 0 ? `, gateway node ${GATEWAY_NODE_OPTIONS.join(' ')}` : ''}`,
      builds: baseline
        ? [
            `this build: ${GATEWAY_ENTRY} (the work tree as built); baseline: ${baseline.rev} = ${baseline.commit}, rows ${builds[1]!.suffix}, built in a worktree, ${baseline.dependencies}, run with node options ${BASELINE_NODE_OPTIONS.join(' ') || '(defaults)'}; each round alternates which build goes first`,
          ]
        : [],
      rows: rows.map((row) => ({ ...row, peakRssMb: row.server.process.peakRssMb() })),
      stampedes,
      fixedRate,
      g1zWireShare,
      baselineRev: baseline?.rev,
      resultsDir: join(root, 'bench', 'results'),
    });
  } finally {
    await Promise.all(processes.reverse().map((p) => p.stop()));
    await sink.close();
    await cluster?.stop();
    // In batches: a run of G3 and G7 with a baseline left 133,095 keys, and one DEL spread over
    // them all overflowed the stack, so the run ended in an error with its keys left behind.
    await deleteKeys(REDIS_URL, prefix);
    baseline?.remove();
    if (bodyDir !== undefined) rmSync(bodyDir, { recursive: true, force: true });
  }
}

/**
 * The hand-written route and the gateway answer a miss with the same JSON, apart from the
 * cursor's bytes in `next` (each signs its own) and the upstream's `queryDuration` (its timing):
 * checked before anything is timed, on queries neither has seen, in each sort order.
 */
async function sameAnswers(gateway: string, hand: string): Promise<void> {
  for (const sort of ['relevance', 'price_asc', 'price_desc', 'rating']) {
    const path = `/api/search?q=wireless+headphones+${randomUUID()}&k=10&sort=${sort}`;
    const [ours, theirs] = await Promise.all(
      [gateway, hand].map(async (origin) => {
        const res = await fetch(`${origin}${path}`, { headers: { 'Accept-Encoding': 'identity' } });
        // The upstream's own timing differs from call to call, and each signs its own cursor.
        const {
          next,
          queryDuration: _,
          ...rest
        } = (await res.json()) as {
          next?: string;
          queryDuration?: number;
        };
        return { status: res.status, body: canonical(rest), paged: next !== undefined };
      }),
    );
    if (JSON.stringify(ours) !== JSON.stringify(theirs)) {
      throw new Error(
        `H and the gateway answer ${path} differently:\n${ours!.body}\n${theirs!.body}`,
      );
    }
  }
}

/** JSON with every object's keys sorted: zod's parse puts the declared keys first. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/**
 * The rows BENCH_ROWS names (all without it), with the rows their ratios divide by, and theirs
 * in turn: R2 is always among them.
 */
function select<B extends RowSpec, G extends RowSpec>(
  bare: readonly B[],
  gateway: readonly G[],
): [B[], G[]] {
  if (ONLY === undefined) return [[...bare], [...gateway]];
  const all: readonly RowSpec[] = [...bare, ...gateway];
  const unknown = ONLY.filter((name) => !all.some((r) => r.name === name));
  if (unknown.length > 0) {
    throw new Error(
      `BENCH_ROWS: no row ${unknown.join(', ')} (rows: ${all.map((r) => r.name).join(', ')})`,
    );
  }
  const wanted = new Set(ONLY);
  for (let more = true; more;) {
    const refs = all.filter((r) => wanted.has(r.name) && !wanted.has(r.ref)).map((r) => r.ref);
    refs.forEach((ref) => wanted.add(ref));
    more = refs.length > 0;
  }
  return [bare.filter((r) => wanted.has(r.name)), gateway.filter((r) => wanted.has(r.name))];
}

function loadOptions(row: Row, seconds: number, salt: string): LoadOptions {
  const paths: PathPlan = row.plan === 'mix' ? { kind: 'mix', mix: MIX, salt } : { kind: row.plan };
  return {
    url: `${row.server.origin}${row.path}`,
    seconds,
    connections: CONNECTIONS,
    paths,
    ...(row.headers ? { headers: row.headers } : {}),
    core: LOAD_CORE,
  };
}

/**
 * The rows of a round in the windows they are measured in: one row per window, or with
 * BENCH_PAIRED=on each gateway row together with its baseline twin, both loaded at once on the
 * shared core, so that whatever else the machine does at that moment bills both builds alike.
 */
function batchesOf(order: readonly Row[]): Row[][] {
  const batches: Row[][] = [];
  for (let i = 0; i < order.length; i += 1) {
    const row = order[i]!;
    const next = order[i + 1];
    const twins =
      next !== undefined && (next.baselineOf === row.name || row.baselineOf === next.name);
    if (PAIRED && twins) {
      batches.push([row, next]);
      i += 1;
    } else {
      batches.push([row]);
    }
  }
  return batches;
}

/**
 * The rows in the order a round measures them: the hand-written route (and R4, its own peer)
 * right before the first row judged against it, rather than with the other bare rows a dozen
 * windows earlier. A full run's machine drifts between windows minutes apart: on 2026-11-28, H
 * and G3, ten windows apart, gave per-round ratios of 1.02, 0.80 and 0.93, where a run of those
 * rows alone, adjacent, gave 0.95-1.00 in five rounds.
 */
function besideTheirPeers(rows: readonly Row[]): Row[] {
  const hand = rows.find((r) => r.name === 'H');
  const first = rows.findIndex((r) => r.ref === 'H');
  if (hand === undefined || first === -1) return [...rows];
  const moved = rows.filter((r) => r === hand || r.name === hand.ref);
  const rest = rows.filter((r) => !moved.includes(r));
  const at = rest.indexOf(rows[first]!);
  return [...rest.slice(0, at), ...moved, ...rest.slice(at)];
}

/** Even rounds run each baseline row before its twin, so that neither build always goes second. */
function inRoundOrder(rows: readonly Row[], round: number): Row[] {
  const order = [...rows];
  if (round % 2 === 1) return order;
  for (let i = 0; i + 1 < order.length; i += 1) {
    if (order[i + 1]!.baselineOf === order[i]!.name) {
      [order[i], order[i + 1]] = [order[i + 1]!, order[i]!];
      i += 1;
    }
  }
  return order;
}

/** A collector stand-in for G1t: accepts OTLP/HTTP exports and drops them. */
async function startOtlpSink() {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

await main();

import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus } from 'node:os';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { GATEWAY_NODE_OPTIONS as PRODUCTION_NODE_OPTIONS } from '../config/runtime.js';
import { freePort, repoRoot } from '../test/harness/chaos-processes.js';
import { startRedisCluster, type RedisCluster } from '../test/harness/redis-topologies.js';
import { hasWrk, load, loadAtRate, type LoadResult } from './bench-load.js';
import { hasTaskset, startProcess, type BenchProcess } from './bench-process.js';

/*
 * `npm run bench`: rows measured side by side in one run on loopback. Each server runs in its
 * own process on core 0, the load generator on core 1 (when taskset exists); every row is
 * warmed up, then measured in alternating rounds, and the median round is kept. Ratios are a
 * row's req/s over R2's from the same run: absolute numbers vary with the machine, ratios far
 * less. BENCH_SECONDS, BENCH_ROUNDS and BENCH_CONNECTIONS shorten a smoke run.
 */

const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 5);
const ROUNDS = Math.max(1, Number(process.env['BENCH_ROUNDS'] ?? 3));
const CONNECTIONS = Number(process.env['BENCH_CONNECTIONS'] ?? 50);
const REDIS_URL = process.env['BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379/0';
const TOKEN = 'bench-search-token';
const SEARCH = '/api/search?q=wireless+headphones&k=10';
const SERVER_CORE = 0;
const SETTLE_MS = 2000;
/** The gateway rows run as the container runs the gateway; BENCH_GATEWAY_NODE_OPTIONS varies it. */
const GATEWAY_NODE_OPTIONS = (process.env['BENCH_GATEWAY_NODE_OPTIONS'] ?? PRODUCTION_NODE_OPTIONS)
  .split(' ')
  .filter(Boolean);
const LOAD_CORE = 1;
/** Another build's entry (e.g. a checkout of an older commit) to compare against. */
const GATEWAY_ENTRY = process.env['BENCH_GATEWAY_ENTRY'] ?? join(repoRoot(), 'dist/src/main.js');

interface Row {
  name: string;
  what: string;
  url: string;
  path: string;
  unique?: boolean;
  process: BenchProcess;
  rounds: (LoadResult & { cpuMicrosPerRequest: number })[];
}

const root = repoRoot();
const tsx = ['--import', 'tsx'];

async function main(): Promise<void> {
  if (hasTaskset) execFileSync('taskset', ['-p', '-c', String(LOAD_CORE), String(process.pid)]);
  const started = new Date();
  const prefix = `bench:${randomUUID()}:`;
  const processes: BenchProcess[] = [];
  const keep = (p: BenchProcess) => (processes.push(p), p);
  const sink = await startOtlpSink();
  let cluster: RedisCluster | undefined;
  try {
    const sims = keep(
      await startProcess(
        [...tsx, join(root, 'bench/targets/simulators-target.ts'), TOKEN, String(await freePort())],
        {
          core: LOAD_CORE,
          label: 'simulators',
        },
      ),
    );
    const { searchOrigin, chatOrigin, chatEmail, chatApiKey } = sims.ready as Record<
      string,
      string
    >;

    const gatewayEnv = (extra: Record<string, string>) => ({
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      SEARCH_BASE_URL: searchOrigin!,
      SEARCH_CLIENT_TOKEN: TOKEN,
      CHAT_BASE_URL: chatOrigin!,
      CHAT_AUTH_MODE: 'service',
      CHAT_EMAIL: chatEmail!,
      CHAT_API_KEY: chatApiKey!,
      CURSOR_SECRET: 'bench-cursor-secret-0123456789abcdef',
      RATE_LIMIT_PER_CLIENT: '1000000',
      RATE_LIMIT_WINDOW_SECONDS: '3600',
      SEARCH_CACHE_TTL_SECONDS: '3600',
      CHANNEL_FOLDERS_CACHE_TTL_SECONDS: '3600',
      SHUTDOWN_DRAIN_DELAY_MS: '0',
      ...extra,
    });
    const gateway = async (label: string, extra: Record<string, string>) => {
      const port = await freePort();
      const p = keep(
        await startProcess([...GATEWAY_NODE_OPTIONS, GATEWAY_ENTRY], {
          env: gatewayEnv({ PORT: String(port), ...extra }),
          core: SERVER_CORE,
          label,
        }),
      );
      return { p, url: `http://127.0.0.1:${port}` };
    };

    const g1 = await gateway('G1', { REDIS_URL: REDIS_URL, REDIS_KEY_PREFIX: `${prefix}g1:` });
    // The exact bytes of a hot answer: what the bare rows send.
    const body = Buffer.from(await (await fetch(`${g1.url}${SEARCH}`)).arrayBuffer());
    const bodyFile = join(mkdtempSync(join(tmpdir(), 'bench-body-')), 'body.json');
    writeFileSync(bodyFile, body);
    const bare = async (row: string, dependency = '') => {
      const port = await freePort();
      const p = keep(
        await startProcess(
          [
            ...tsx,
            join(root, 'bench/targets/bare-target.ts'),
            row,
            String(port),
            bodyFile,
            dependency,
            TOKEN,
          ],
          { core: SERVER_CORE, label: row },
        ),
      );
      return { p, url: `http://127.0.0.1:${port}` };
    };
    const [r1, r2, r3, r4] = [
      await bare('R1'),
      await bare('R2'),
      await bare('R3', REDIS_URL),
      await bare('R4', searchOrigin),
    ];
    const g1m = await gateway('G1m', {});
    const g3 = await gateway('G3', { REDIS_URL: REDIS_URL, REDIS_KEY_PREFIX: `${prefix}g3:` });
    const g4 = await gateway('G4', { REDIS_URL: REDIS_URL, REDIS_KEY_PREFIX: `${prefix}g4:` });
    // What operations cost on the hit path: G1 without metrics, and G1 traced (every request
    // sampled, spans exported to a collector stand-in that accepts and drops them).
    const g1x = await gateway('G1x', {
      REDIS_URL: REDIS_URL,
      REDIS_KEY_PREFIX: `${prefix}g1:`,
      METRICS: 'off',
    });
    const g1t = await gateway('G1t', {
      REDIS_URL: REDIS_URL,
      REDIS_KEY_PREFIX: `${prefix}g1:`,
      OTEL_EXPORTER_OTLP_ENDPOINT: sink.origin,
    });

    // BENCH_CLUSTER=off skips the cluster rows (they start six more redis-server processes).
    cluster = process.env['BENCH_CLUSTER'] === 'off' ? undefined : await startRedisCluster();
    const clusterEnv = cluster && {
      REDIS_CLUSTER_NODES: cluster.seeds,
      REDIS_KEY_PREFIX: `${prefix}g6:`,
      SESSION_SECRET: 'bench-session-secret-0123456789abcdef',
    };
    const g6 = clusterEnv && (await gateway('G6', clusterEnv));
    const g6b = clusterEnv && (await gateway('G6b', clusterEnv));

    const rows: Row[] = [
      {
        name: 'R1',
        what: 'bare node:http, same bytes',
        path: SEARCH,
        url: r1.url,
        process: r1.p,
        rounds: [],
      },
      {
        name: 'R2',
        what: 'bare Express 5, same bytes',
        path: SEARCH,
        url: r2.url,
        process: r2.p,
        rounds: [],
      },
      {
        name: 'R3',
        what: 'bare Express 5 + one ioredis GET',
        path: SEARCH,
        url: r3.url,
        process: r3.p,
        rounds: [],
      },
      {
        name: 'R4',
        what: 'bare Express 5 + one undici call to the search simulator',
        path: SEARCH,
        unique: true,
        url: r4.url,
        process: r4.p,
        rounds: [],
      },
      {
        name: 'G1',
        what: 'gateway, hot hit from Redis, rate limiter on',
        path: SEARCH,
        url: g1.url,
        process: g1.p,
        rounds: [],
      },
      {
        name: 'G1x',
        what: 'G1 with METRICS=off',
        path: SEARCH,
        url: g1x.url,
        process: g1x.p,
        rounds: [],
      },
      {
        name: 'G1t',
        what: 'G1 traced: every request sampled, spans exported over OTLP',
        path: SEARCH,
        url: g1t.url,
        process: g1t.p,
        rounds: [],
      },
      {
        name: 'G1m',
        what: 'gateway, hot hit from the in-process store',
        path: SEARCH,
        url: g1m.url,
        process: g1m.p,
        rounds: [],
      },
      {
        name: 'G3',
        what: 'gateway, every search a miss (Redis)',
        path: SEARCH,
        unique: true,
        url: g3.url,
        process: g3.p,
        rounds: [],
      },
      ...(g6
        ? [
            {
              name: 'G6',
              what: 'gateway, hot hit from a Redis Cluster (one of two instances)',
              path: SEARCH,
              url: g6.url,
              process: g6.p,
              rounds: [],
            },
          ]
        : []),
      {
        name: 'G4',
        what: 'gateway, channel folders hit (Redis)',
        path: '/api/chat/channel-folders',
        url: g4.url,
        process: g4.p,
        rounds: [],
      },
    ];

    // BENCH_ROWS=R2,G1 measures a subset (R2 is always kept: it is what the ratios divide by).
    const only = process.env['BENCH_ROWS']?.split(',');
    if (only)
      rows.splice(0, rows.length, ...rows.filter((r) => r.name === 'R2' || only.includes(r.name)));
    for (const row of rows) {
      await fetch(`${row.url}${row.path}`); // fill the cache
      await load({
        url: `${row.url}${row.path}`,
        seconds: 2,
        connections: CONNECTIONS,
        uniqueSuffix: row.unique ?? false,
        core: LOAD_CORE,
      });
    }
    for (let round = 1; round <= ROUNDS; round += 1) {
      for (const row of rows) {
        // The previous row's server collects its garbage once its load stops, on the same core:
        // let it settle so that it does not bill the next row.
        await sleep(SETTLE_MS);
        const before = row.process.cpuMicros();
        const result = await load({
          url: `${row.url}${row.path}`,
          seconds: SECONDS,
          connections: CONNECTIONS,
          uniqueSuffix: row.unique ?? false,
          core: LOAD_CORE,
        });
        const cpu = row.process.cpuMicros() - before;
        row.rounds.push({
          ...result,
          cpuMicrosPerRequest: result.requests > 0 ? cpu / result.requests : 0,
        });
        process.stdout.write(`round ${round} ${row.name}: ${result.rps.toFixed(0)} req/s\n`);
      }
    }

    const g5 = await gateway('G5', { REDIS_URL: REDIS_URL, REDIS_KEY_PREFIX: `${prefix}g5:` });
    const stampede = await coldStampede([g5.url], sims);
    // G6: two instances of one deployment on a Redis Cluster (six redis-server processes).
    const fleetStampede = cluster ? await coldStampede([g6!.url, g6b!.url], sims) : undefined;
    const medians = rows.map((row) => ({ row, median: medianRound(row.rounds) }));
    const hot = medians.find((m) => m.row.name === 'G1');
    const g1Rate = Math.round((hot?.median.rps ?? 0) / 2);
    const fixed = hot
      ? await loadAtRate(
          {
            url: `${hot.row.url}${SEARCH}`,
            seconds: SECONDS,
            connections: CONNECTIONS,
            core: LOAD_CORE,
          },
          g1Rate,
        )
      : undefined;
    report({ started, medians, stampede, fleetStampede, fixed, g1Rate });
  } finally {
    await Promise.all(processes.reverse().map((p) => p.stop()));
    await sink.close();
    await cluster?.stop();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  }
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

function medianRound(rounds: Row['rounds']) {
  const sorted = [...rounds].sort((a, b) => a.rps - b.rps);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** G5: 200 concurrent requests for one new key on a fresh gateway; how many upstream calls. */
/** Concurrent requests for one new key, spread over `urls`: how many upstream calls they made. */
async function coldStampede(urls: readonly string[], sims: BenchProcess, requests = 200) {
  const control = `http://127.0.0.1:${String(sims.ready['controlPort'])}`;
  const calls = async () =>
    ((await (await fetch(control)).json()) as { searches: number }).searches;
  const before = await calls();
  const path = `/api/search?q=stampede+${randomUUID().slice(0, 8)}&k=10`;
  const answers = await Promise.all(
    Array.from({ length: requests }, (_, i) =>
      fetch(`${urls[i % urls.length]!}${path}`).then((r) => r.status),
    ),
  );
  return {
    requests,
    instances: urls.length,
    ok: answers.filter((s) => s === 200).length,
    upstreamCalls: (await calls()) - before,
  };
}

type Stampede = Awaited<ReturnType<typeof coldStampede>>;

function report(input: {
  started: Date;
  medians: { row: Row; median: Row['rounds'][number] }[];
  stampede: Stampede;
  fleetStampede: Stampede | undefined;
  fixed: LoadResult | undefined;
  g1Rate: number;
}): void {
  const { medians, stampede, fixed } = input;
  const r2 = medians.find((m) => m.row.name === 'R2')!.median.rps;
  const rps = (name: string) => medians.find((m) => m.row.name === name)?.median.rps ?? Number.NaN;
  const r4 = rps('R4');
  const gatewayRss = Math.max(
    ...medians.filter((m) => m.row.name.startsWith('G')).map((m) => m.row.process.peakRssMb()),
  );
  const machine = `${cpus()[0]?.model ?? 'cpu'} × ${cpus().length}, Node ${process.version}, ${hasWrk ? 'wrk' : 'autocannon'} -c${CONNECTIONS}, ${SECONDS} s × ${ROUNDS} rounds, ${hasTaskset ? 'server on core 0, load on core 1' : 'unpinned'}${GATEWAY_NODE_OPTIONS.length > 0 ? `, gateway node ${GATEWAY_NODE_OPTIONS.join(' ')}` : ''}`;
  const header = [
    'row',
    'what',
    'req/s',
    'vs R2',
    'p50 ms',
    'p99 ms',
    'CPU µs/req',
    'peak RSS MB',
    'errors',
  ];
  const lines = medians.map(({ row, median }) => [
    row.name,
    row.what,
    median.rps.toFixed(0),
    (median.rps / r2).toFixed(2),
    median.p50Ms.toFixed(2),
    median.p99Ms.toFixed(2),
    median.cpuMicrosPerRequest.toFixed(0),
    row.process.peakRssMb().toFixed(0),
    String(median.errors),
  ]);
  const widths = header.map((_, i) =>
    Math.max(header[i]!.length, ...lines.map((l) => l[i]!.length)),
  );
  const fmt = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  const targets = (
    [
      ['G1 ≥ 1.0 × R2', rps('G1') / r2 >= 1, (rps('G1') / r2).toFixed(2)],
      ['G3 ≥ 0.6 × R4', rps('G3') / r4 >= 0.6, (rps('G3') / r4).toFixed(2)],
      [
        'G5 = exactly 1 upstream call',
        stampede.upstreamCalls === 1,
        String(stampede.upstreamCalls),
      ],
      [
        'G6 stampede over 2 instances = exactly 1 upstream call',
        input.fleetStampede?.upstreamCalls === 1,
        String(input.fleetStampede?.upstreamCalls ?? Number.NaN),
      ],
      ['gateway RSS under load < 150 MB', gatewayRss < 150, gatewayRss.toFixed(0)],
    ] as const
  ).filter(([, , value]) => value !== 'NaN');
  const text = [
    `npm run bench, ${input.started.toISOString()}`,
    machine,
    '',
    fmt(header),
    fmt(widths.map((w) => '-'.repeat(w))),
    ...lines.map(fmt),
    '',
    `G5 cold stampede: ${stampede.requests} concurrent requests for one new key → ${stampede.upstreamCalls} upstream call(s), ${stampede.ok} answered 200`,
    input.fleetStampede
      ? `G6 cold stampede on a Redis Cluster: ${input.fleetStampede.requests} concurrent requests over ${input.fleetStampede.instances} instances → ${input.fleetStampede.upstreamCalls} upstream call(s), ${input.fleetStampede.ok} answered 200`
      : '',
    fixed
      ? `G1 at a fixed ${input.g1Rate} req/s (half its throughput, autocannon): p50 ${fixed.p50Ms.toFixed(2)} ms, p99 ${fixed.p99Ms.toFixed(2)} ms, ${fixed.rps.toFixed(0)} req/s achieved, ${fixed.errors} errors`
      : '',
    '',
    ...targets.map(([what, met, value]) => `${met ? 'met   ' : 'MISSED'} ${what}: ${value}`),
    '',
  ].join('\n');
  process.stdout.write(text);
  const results = join(root, 'bench', 'results');
  mkdirSync(results, { recursive: true });
  const json = JSON.stringify(
    {
      date: input.started.toISOString(),
      machine,
      rows: medians.map(({ row, median }) => ({
        row: row.name,
        what: row.what,
        ...median,
        vsR2: median.rps / r2,
        peakRssMb: row.process.peakRssMb(),
        rounds: row.rounds,
      })),
      stampede,
      fleetStampede: input.fleetStampede,
      fixedRate: { rate: input.g1Rate, ...fixed },
      targets: targets.map(([what, met, value]) => ({ what, met, value })),
    },
    null,
    2,
  );
  writeFileSync(join(results, 'latest.json'), `${json}\n`);
}

await main();

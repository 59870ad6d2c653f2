import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { repoRoot, freePort } from '../test/harness/chaos-processes.js';
import { prepareBaseline, type BaselineBuild } from './baseline-build.js';
import { startProcess, type BenchProcess } from './bench-process.js';
import { deleteKeys } from './events-gateway.js';
import { GATEWAY_ENTRY, GATEWAY_NODE_OPTIONS, gatewayEnv, startSimulators } from './gateway-env.js';
import { markdownTable } from './text-table.js';

/*
 * `npm run bench:instructions -- <git rev>`: the instructions the gateway executes per request
 * (valgrind's callgrind, every thread of the process), this build beside another, for the hot
 * hit (G1) and for misses (G3). Instruction counts do not depend on what else the machine is
 * doing: within one run a build's two counts agree within 1% (hits) and 4% (misses), and
 * separate runs of the same code within about ±7% (how concurrent requests overlap depends on
 * timing), where `npm run bench` moved G1 by ±14% between runs of one day.
 * They are not time (a cache miss costs more than an add), so read them beside the bench's CPU
 * per request, not instead of it.
 *
 * Each gateway runs under callgrind with instrumentation off until it is warm (W requests, so
 * the JIT has compiled the path), then the counters are zeroed, N requests are sent (8 at a
 * time) and the counters dumped. Each build runs twice, in the order A B B A, and the mean of
 * its two is kept. BENCH_HITS and BENCH_MISSES (default 500 each) set N; BENCH_ROWS=G3 measures
 * one row.
 */

const ROWS = (process.env['BENCH_ROWS'] ?? 'G1,G3').split(',');
const HITS = Number(process.env['BENCH_HITS'] ?? 500);
const MISSES = Number(process.env['BENCH_MISSES'] ?? 500);
const REDIS_URL = process.env['BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379/0';
/** The run's Redis keys, deleted at its end. */
let runs = 0;
const PREFIX = `bench:instr:${process.pid}:`;
/** What gatewayEnv sets HOST to. */
const GATEWAY_HOST = '127.0.0.1';
const HIT = '/api/search?q=wireless+headphones&k=10';
/**
 * The i-th miss: the same queries for both builds (a query decides the simulator's answer, its
 * size and so the work), each build with a Redis prefix of its own so both miss.
 */
const missPath = (i: number, phase: string) => `/api/search?q=instr+${phase}+${i}&k=10`;

interface Build {
  label: string;
  entry: string;
}

interface Row {
  row: string;
  build: string;
  requests: number;
  perRequest: number;
}

/** Asks the gateway's callgrind to do something, through the pipe named after `prefix`. */
function callgrindControl(prefix: string, args: string[]): void {
  execFileSync('callgrind_control', [`--vgdb-prefix=${prefix}`, ...args], {
    stdio: 'ignore',
    // The pipe's name ends with the USER and HOST of the gateway's environment (no USER, and
    // HOST its listen address): the same ones here.
    env: { PATH: process.env['PATH'] ?? '', HOST: GATEWAY_HOST },
  });
}

/** Sends `paths` 8 at a time; every answer must be a 200. */
async function send(pool: Pool, paths: readonly string[]): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < paths.length) {
      const path = paths[next++]!;
      const { statusCode, body } = await pool.request({ method: 'GET', path });
      await body.arrayBuffer();
      if (statusCode !== 200) throw new Error(`${path}: ${statusCode}`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

/** Instructions between zeroing and dumping the counters, across the dump's parts (threads). */
function measured(dir: string, pid: number): number {
  let total = 0;
  for (const file of readdirSync(dir).filter((f) => f.startsWith(`callgrind.out.${pid}`))) {
    const text = readFileSync(join(dir, file), 'utf8');
    // Only the dump made on request (`-d`), not the one at exit.
    if (!/^desc: Trigger: dump/m.test(text)) continue;
    total += Number(/^summary: (\d+)/m.exec(text)?.[1] ?? /^totals: (\d+)/m.exec(text)?.[1] ?? 0);
  }
  return total;
}

async function measure(
  build: Build,
  upstreams: Awaited<ReturnType<typeof startSimulators>>['upstreams'],
): Promise<Row[]> {
  const rows: Row[] = [];
  for (const [row, warm, paths] of [
    ['G1', Array.from({ length: 300 }, () => HIT), Array.from({ length: HITS }, () => HIT)],
    [
      'G3',
      Array.from({ length: 100 }, (_, i) => missPath(i, 'warm')),
      Array.from({ length: MISSES }, (_, i) => missPath(i, 'measured')),
    ],
  ] as const) {
    if (!ROWS.includes(row)) continue;
    const dir = mkdtempSync(join(tmpdir(), 'bench-instructions-'));
    const port = await freePort();
    let gateway: BenchProcess | undefined;
    try {
      gateway = await startProcess([...GATEWAY_NODE_OPTIONS, build.entry], {
        label: `${row} ${build.label}`,
        env: gatewayEnv(port, upstreams, {
          REDIS_URL,
          // A prefix per run: a build's second run misses as its first did.
          REDIS_KEY_PREFIX: `${PREFIX}${(runs += 1)}:`,
          // Under valgrind everything is ~50 times slower: deadlines that still hold.
          SEARCH_TIMEOUT_MS: '60000',
          REDIS_COMMAND_TIMEOUT_MS: '10000',
          LOG_LEVEL: 'warn',
        }),
        wrapper: [
          'valgrind',
          '--tool=callgrind',
          '--instr-atstart=no',
          `--callgrind-out-file=${join(dir, 'callgrind.out.%p')}`,
          '--separate-threads=no',
          `--vgdb-prefix=${join(dir, 'vgdb')}`,
        ],
        startTimeoutMs: 300_000,
      });
      const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 8 });
      const control = (...args: string[]) =>
        callgrindControl(join(dir, 'vgdb'), [...args, String(gateway!.pid)]);
      control('-i', 'on');
      await send(pool, warm);
      control('-z');
      await send(pool, paths);
      control('-d');
      await pool.close();
      const instructions = measured(dir, gateway.pid);
      rows.push({
        row,
        build: build.label,
        requests: paths.length,
        perRequest: instructions / paths.length,
      });
      process.stderr.write(
        `${row} ${build.label}: ${Math.round(instructions / paths.length)} instructions per request\n`,
      );
    } finally {
      await gateway?.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return rows;
}

async function main(): Promise<void> {
  const rev = process.argv[2];
  if (rev === undefined) throw new Error('usage: npm run bench:instructions -- <git rev>');
  let baseline: BaselineBuild | undefined;
  const simulators = await startSimulators(1);
  try {
    baseline = prepareBaseline(rev, repoRoot());
    const builds: Build[] = [
      { label: 'this', entry: GATEWAY_ENTRY },
      { label: baseline.commit, entry: baseline.entry },
    ];
    const rows: Row[] = [];
    // This build, the other, the other, this: whichever runs first reads about 4% more (this
    // build against itself: 1.041), so each build runs once first and once second.
    for (const build of [...builds, ...[...builds].reverse()]) {
      rows.push(...(await measure(build, simulators.upstreams)));
    }
    const of = (row: string, build: string) => {
      const measuredRuns = rows.filter((r) => r.row === row && r.build === build);
      return measuredRuns.reduce((sum, r) => sum + r.perRequest, 0) / measuredRuns.length;
    };
    console.log(
      markdownTable(
        ['row', 'requests', 'instructions/req (this)', `(${baseline.commit})`, 'ratio'],
        ['G1', 'G3']
          .filter((row) => ROWS.includes(row))
          .map((row) => [
            row,
            String(rows.find((r) => r.row === row)!.requests),
            Math.round(of(row, 'this')).toLocaleString('en'),
            Math.round(of(row, baseline!.commit)).toLocaleString('en'),
            (of(row, 'this') / of(row, baseline!.commit)).toFixed(3),
          ]),
      ).join('\n'),
    );
  } finally {
    baseline?.remove();
    await simulators.process.stop();
    await deleteKeys(REDIS_URL, PREFIX);
  }
}

await main();

import { join } from 'node:path';
import { Redis } from 'ioredis';
import type * as CacheEntries from '../src/cache/cache-entry.js';
import type * as Cursors from '../src/features/search/search-cursor.js';
import type * as Rerank from '../src/features/search/rerank.js';
import type * as TransportErrors from '../src/upstreams/http/transport-errors.js';
import type * as SearchSchemas from '../src/upstreams/search/search-schemas.js';
import type * as Simulators from '../simulators/start-simulators.js';
import { repoRoot } from '../test/harness/chaos-processes.js';
import { deleteKeys } from './events-gateway.js';
import { markdownTable } from './text-table.js';

/*
 * `npm run bench:floor`: the CPU a search miss cannot avoid beyond what bare Express plus one
 * undici call (R4) does, each step the contract requires measured alone in a loop on the
 * gateway's own built code (dist/, not tsx), with no HTTP, no Express, no logger and no
 * collector pressure from anything else: parse the upstream body (with the depth check),
 * validate it, rerank and sign the cursor, serialise and digest it, name the cache key, and the
 * two Redis round trips of an uncontended miss (a script of the admission's shape, then the
 * entry's SET), 50 in flight as under load. Issue 18's G3 target (a miss at no more than twice
 * R4's CPU) leaves R4's µs for all of that plus routing, logging and garbage collection: compare
 * the sum with R4's CPU per request in `npm run bench`.
 */

const REDIS_URL = process.env['BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379/0';
const PREFIX = `bench:floor:${process.pid}:`;
const ITERATIONS = Number(process.env['BENCH_ITERATIONS'] ?? 5000);
const IN_FLIGHT = 50;

const dist = (path: string) => import(join(repoRoot(), 'dist', path));
const { parseJsonBody } = (await dist(
  'src/upstreams/http/transport-errors.js',
)) as typeof TransportErrors;
const { ResultListInPlace } = (await dist(
  'src/upstreams/search/search-schemas.js',
)) as typeof SearchSchemas;
const { rerank } = (await dist('src/features/search/rerank.js')) as typeof Rerank;
const { createCursorCodec } = (await dist(
  'src/features/search/search-cursor.js',
)) as typeof Cursors;
const { toRepresentation, encodeEntry } = (await dist(
  'src/cache/cache-entry.js',
)) as typeof CacheEntries;
const { startSimulators } = (await dist('simulators/start-simulators.js')) as typeof Simulators;
const { createHash } = await import('node:crypto');

/** CPU µs per call of `step`, after as many calls again to warm the JIT. */
function cpuPerCall(step: (i: number) => unknown): number {
  for (let i = 0; i < ITERATIONS; i += 1) step(i);
  const before = process.cpuUsage();
  for (let i = 0; i < ITERATIONS; i += 1) step(i);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / ITERATIONS;
}

/** CPU µs per command with IN_FLIGHT commands outstanding, after a warm-up. */
async function cpuPerCommand(command: (i: number) => Promise<unknown>): Promise<number> {
  const rounds = Math.ceil(ITERATIONS / IN_FLIGHT);
  const run = async (offset: number) => {
    for (let r = 0; r < rounds; r += 1) {
      await Promise.all(
        Array.from({ length: IN_FLIGHT }, (_, j) => command(offset + r * IN_FLIGHT + j)),
      );
    }
  };
  await run(0);
  const before = process.cpuUsage();
  await run(rounds * IN_FLIGHT);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / (rounds * IN_FLIGHT);
}

const sims = await startSimulators({ clientToken: 'floor' });
const redis = new Redis(REDIS_URL, { keyPrefix: PREFIX });
try {
  // 100 distinct answers of the bench's G3 search, as the upstream sends them.
  const bodies: Buffer[] = [];
  for (let i = 0; i < 100; i += 1) {
    const res = await fetch(
      `${sims.searchOrigin}/v1/search?q=wireless+headphones+${i}x${i * 7919}&k=10`,
      { headers: { 'service-client-token': 'floor' } },
    );
    bodies.push(Buffer.from(await res.arrayBuffer()));
  }
  const response = (i: number) => ({
    headers: { 'content-type': 'application/json' },
    body: bodies[i % bodies.length]!,
  });
  const lists = bodies.map((_, i) => parseJsonBody(response(i), 'search', 64));
  const valid = lists.map((list) => {
    const result = ResultListInPlace.safeParse(list);
    if (!result.success) throw new Error('the simulator sent a list the gateway rejects');
    return result.data;
  });
  const cursors = createCursorCodec({
    secret: 'floor-cursor-secret-0123456789abcdef',
    searchBaseUrl: sims.searchOrigin,
  });
  const representation = toRepresentation(valid[0], 'application/json; charset=utf-8');
  const entry = encodeEntry({
    ...representation,
    storedAt: Date.now(),
    freshUntil: Date.now() + 60_000,
    staleUntil: Date.now() + 120_000,
    errorUntil: Date.now() + 180_000,
  });
  // The admission's shape: a counted window, the entry's read and, finding none, the lock.
  const admission = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local entry = redis.call('GET', KEYS[2])
if entry then return {count, entry} end
return {count, redis.call('SET', KEYS[3], ARGV[2], 'NX', 'PX', ARGV[3]) and 1 or 0}
`;
  const sha = (await redis.script('LOAD', admission)) as string;

  const rows: [string, number][] = [
    [
      'parse the upstream body (depth check, UTF-8 decode, JSON.parse)',
      cpuPerCall((i) => parseJsonBody(response(i), 'search', 64)),
    ],
    [
      'validate it (ResultListInPlace)',
      cpuPerCall((i) => ResultListInPlace.safeParse(lists[i % lists.length])),
    ],
    [
      'rerank (relevance) and sign the cursor',
      cpuPerCall((i) => {
        const list = rerank(valid[i % valid.length]!, 'relevance');
        return list.next === undefined ? undefined : cursors.encode(list.next, 'relevance');
      }),
    ],
    [
      'serialise, encode and digest (toRepresentation)',
      cpuPerCall((i) =>
        toRepresentation(valid[i % valid.length], 'application/json; charset=utf-8'),
      ),
    ],
    [
      'the cache key (SHA-256 of the query)',
      cpuPerCall((i) =>
        createHash('sha256').update(`q=wireless+headphones+${i}&k=10`).digest('base64url'),
      ),
    ],
    [
      `Redis: the admission script, ${IN_FLIGHT} in flight`,
      await cpuPerCommand((i) =>
        redis.evalsha(sha, 3, 'rate', `e${i}`, `l${i}`, 60_000, 'token', 10_000),
      ),
    ],
    [
      `Redis: SET of the entry (${entry.length} bytes) PX, ${IN_FLIGHT} in flight`,
      await cpuPerCommand((i) => redis.set(`s${i % 500}`, entry, 'PX', 60_000)),
    ],
  ];
  const total = rows.reduce((sum, [, us]) => sum + us, 0);
  const table = markdownTable(
    ['step a miss adds to R4', 'CPU µs'],
    [...rows, ['sum', total] as const].map(([step, us]) => [step, us.toFixed(1)]),
  );
  console.log(table.join('\n'));
  console.log(
    `\nupstream body ${bodies[0]!.length} bytes, answer ${representation.body.length} bytes; ` +
      `G3 ≤ 2 × R4 leaves R4's CPU µs for this sum plus routing, logging and garbage collection.`,
  );
} finally {
  redis.disconnect();
  await sims.close();
  await deleteKeys(REDIS_URL, PREFIX);
}

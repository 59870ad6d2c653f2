import { performance } from 'node:perf_hooks';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { loadConfig } from '../config/load-config.js';
import { ROUTE_TABLE } from '../src/features/route-table.js';
import { createGateway } from '../src/composition/gateway.js';
import { createLogger } from '../src/logging/create-logger.js';
import { createSearchSimulator } from '../simulators/search/search-simulator.js';

/*
 * `npx tsx bench/compression-levels.ts`: how long br and gzip take, and how small they make a
 * real search answer, at each level: the numbers behind the qualities in src/cache/encodings.ts
 * (docs/reliability.md, Compression). The answer is the gateway's own for the bench's hot
 * search, fetched through a gateway on the search simulator; each level is timed over many runs
 * and the median kept.
 */

const RUNS = Number(process.env['RUNS'] ?? 200);
const QUERY = process.env['QUERY'] ?? '/api/search?q=wireless+headphones&k=10';

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function time(fn: () => Buffer): { ms: number; bytes: number } {
  let bytes = 0;
  for (let i = 0; i < 10; i += 1) bytes = fn().length; // warm up
  const runs: number[] = [];
  for (let i = 0; i < RUNS; i += 1) {
    const started = performance.now();
    fn();
    runs.push(performance.now() - started);
  }
  return { ms: median(runs), bytes };
}

async function main(): Promise<void> {
  const clientToken = 'levels-token';
  const search = createSearchSimulator({ clientToken });
  await search.listen();
  const gateway = createGateway({
    config: loadConfig(
      {
        HOST: '127.0.0.1',
        PORT: '0',
        SEARCH_BASE_URL: search.origin,
        SEARCH_CLIENT_TOKEN: clientToken,
        CHAT_BASE_URL: 'http://127.0.0.1:9',
        CHAT_AUTH_MODE: 'session',
        SHUTDOWN_DRAIN_DELAY_MS: '0',
      },
      ROUTE_TABLE,
    ),
    logger: createLogger({ level: 'silent' }),
  });
  await gateway.start();
  try {
    const res = await fetch(`${gateway.url}${QUERY}`, {
      headers: { 'Accept-Encoding': 'identity' },
    });
    const body = Buffer.from(await res.arrayBuffer());
    console.log(`${QUERY}: ${res.status}, ${body.length} bytes identity, ${RUNS} runs per level`);
    console.log('coding  level  bytes  ratio  median ms');
    for (let q = 1; q <= 11; q += 1) {
      const r = time(() =>
        brotliCompressSync(body, {
          params: {
            [constants.BROTLI_PARAM_QUALITY]: q,
            [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
            [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
          },
        }),
      );
      console.log(
        `br      ${String(q).padStart(5)}  ${String(r.bytes).padStart(5)}  ${(r.bytes / body.length).toFixed(3)}  ${r.ms.toFixed(3)}`,
      );
    }
    for (let level = 1; level <= 9; level += 1) {
      const r = time(() => gzipSync(body, { level }));
      console.log(
        `gzip    ${String(level).padStart(5)}  ${String(r.bytes).padStart(5)}  ${(r.bytes / body.length).toFixed(3)}  ${r.ms.toFixed(3)}`,
      );
    }
  } finally {
    await gateway.stop();
    await search.close();
  }
}

await main();

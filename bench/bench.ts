import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import express from 'express';
import { Redis } from 'ioredis';
import { loadConfig } from '../config/load-config.js';
import { createGateway } from '../src/create-gateway.js';
import { createGatewayResources } from '../src/gateway-resources.js';
import { createLogger } from '../src/logging/create-logger.js';
import { createSearchSimulator } from '../src/simulators/search/search-simulator.js';

/*
 * `npm run bench`: the gateway's search path measured side by side with a bare Express route
 * serving the same bytes, in one run on loopback, so the ratios hold on a noisy shared machine
 * even when the absolute numbers do not. Bounded: a few seconds per target.
 */

const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 4);
const CONNECTIONS = Number(process.env['BENCH_CONNECTIONS'] ?? 16);
const REDIS_URL = process.env['BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379/0';
const PATH = '/api/search?q=wireless+headphones&k=10&sort=price_asc';

async function listen(app: RequestListener): Promise<{ server: Server; url: string }> {
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

interface Row {
  target: string;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
}

async function measure(target: string, url: string): Promise<Row> {
  const result = await autocannon({
    url: `${url}${PATH}`,
    connections: CONNECTIONS,
    duration: SECONDS,
  });
  return {
    target,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx + result.errors + result.timeouts,
  };
}

async function main(): Promise<void> {
  const sim = createSearchSimulator({ clientToken: 'bench-token' });
  const origin = await sim.listen();
  const logger = createLogger({ level: 'silent' });
  const closers: (() => Promise<unknown>)[] = [() => sim.close()];

  async function gateway(label: string, env: Record<string, string>) {
    const config = loadConfig({
      CHAT_BASE_URL: 'http://127.0.0.1:9',
      SEARCH_BASE_URL: origin,
      SEARCH_CLIENT_TOKEN: 'bench-token',
      CURSOR_SECRET: 'bench-cursor-secret-0123456789abcdef',
      SESSION_SECRET: 'bench-session-secret-0123456789abcdef',
      // One client sends everything here; the limit must not be what is measured.
      RATE_LIMIT_PER_CLIENT: '1000000',
      ...env,
    });
    const resources = createGatewayResources(config, logger);
    await resources.connect();
    const gw = createGateway(resources.parts);
    const { server, url } = await listen(gw.app);
    closers.push(async () => {
      await new Promise((resolve) => server.close(resolve));
      gw.shutdown();
      await resources.close();
    });
    // Warm the entry so every measured request of a caching target is a hit.
    const warm = await fetch(`${url}${PATH}`);
    return { label, url, body: await warm.text(), type: warm.headers.get('content-type') ?? '' };
  }

  const prefix = `bench:${process.pid}:`;
  closers.push(async () => {
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });
  const memory = await gateway('gateway, cache hit (in-process)', {});
  const redis = await gateway('gateway, cache hit (Redis)', {
    REDIS_URL,
    REDIS_KEY_PREFIX: prefix,
  });
  const uncached = await gateway('gateway, no cache (upstream + rerank + rp)', {
    SEARCH_CACHE_TTL_SECONDS: '0',
    SEARCH_CACHE_STALE_SECONDS: '0',
    SEARCH_CACHE_STALE_IF_ERROR_SECONDS: '0',
  });

  // The floor: Express answering the same bytes with nothing but a route.
  const bare = express();
  bare.get('/api/search', (_req, res) => {
    res.type(memory.type).send(memory.body);
  });
  const bareServer = await listen(bare);
  closers.push(() => new Promise((resolve) => bareServer.server.close(resolve)));

  const rows: Row[] = [];
  rows.push(await measure('bare Express route, same body', bareServer.url));
  for (const target of [memory, redis, uncached])
    rows.push(await measure(target.label, target.url));

  const floor = rows[0]!.rps;
  const table = [
    ['target', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'throughput vs bare'],
    ...rows.map((r) => [
      r.target,
      r.rps.toFixed(0),
      String(r.p50),
      String(r.p99),
      String(r.non2xx),
      (r.rps / floor).toFixed(2),
    ]),
  ];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  const line = (row: string[]) =>
    `| ${row.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
  process.stdout.write(
    [
      `search path, ${CONNECTIONS} connections, ${SECONDS} s per target, body ${Buffer.byteLength(memory.body)} bytes, Node ${process.version}`,
      line(table[0]!),
      line(widths.map((w) => '-'.repeat(w))),
      ...table.slice(1).map(line),
      '',
    ].join('\n'),
  );
  for (const close of closers.reverse()) await close();
}

await main();

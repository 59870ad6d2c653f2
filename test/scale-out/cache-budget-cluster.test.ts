import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCacheMemoryBudget } from '../../src/cache/cache-memory-budget.js';
import { startRedisCluster, redisCli, type RedisCluster } from '../harness/redis-topologies.js';
import { eventually } from '../helpers/eventually.js';
import { createLogCapture } from '../helpers/log-capture.js';

/*
 * CACHE_REDIS_MAX_BYTES on a Redis Cluster (contract section 1): each node's own used_memory
 * against half its own maxmemory, for the keys in its slots. A real six-process cluster; one
 * master is filled past its budget by keys of one hash tag, and only that node's keys stop
 * being stored.
 */

let cluster: RedisCluster;
beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

const PREFIX = 'budget-test:';
const MAXMEMORY = 64 * 1024 * 1024;

describe('the cache memory budget on a Redis Cluster', () => {
  it('when one master passes half its maxmemory, then only the keys of its slots are refused', async () => {
    await Promise.all(
      cluster.nodes.map((node) =>
        redisCli(node.port, 'config', 'set', 'maxmemory', String(MAXMEMORY)),
      ),
    );
    // Two cache keys whose slots (hash tags, key prefix included) sit on different masters.
    const full = `search:v3:{a}`;
    const fullNode = await cluster.masterOf(`${PREFIX}${full}`);
    let other = '';
    for (let i = 0; other === ''; i += 1) {
      const candidate = `search:v3:{b${i}}`;
      if ((await cluster.masterOf(`${PREFIX}${candidate}`)).port !== fullNode.port)
        other = candidate;
    }
    // 40 MiB of filler in the full key's slot: past half of 64 MiB on that node only.
    const filler = new Redis(fullNode.port, '127.0.0.1');
    const chunk = 'x'.repeat(1024 * 1024);
    for (let i = 0; i < 40; i += 1) await filler.set(`${PREFIX}{a}filler:${i}`, chunk);
    filler.disconnect();

    const redis = new Cluster(
      cluster.seeds
        .split(',')
        .map((seed) => ({ host: '127.0.0.1', port: Number(seed.split(':')[1]) })),
      { keyPrefix: PREFIX, lazyConnect: true },
    );
    const logs = createLogCapture();
    const budget = createCacheMemoryBudget({
      redis,
      maxBytes: undefined,
      keyPrefix: PREFIX,
      logger: logs.logger,
    });
    try {
      await redis.connect();
      await budget.start();
      await eventually(() => !budget.allows(full, 1), {
        what: 'the full node to be read as past its budget',
        timeoutMs: 15_000,
      });
      expect(budget.allows(other, 1024)).toBe(true);
      expect(budget.skipped['memory']).toBeGreaterThan(0);
      expect(logs.text()).not.toMatch(/not enforced/);
    } finally {
      budget.stop();
      redis.disconnect();
    }
  }, 60_000);
});

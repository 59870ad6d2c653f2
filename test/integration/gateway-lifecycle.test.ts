import type { Server } from 'node:http';
import { Redis } from 'ioredis';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../harness/chaos-processes.js';
import { eventually } from '../helpers/eventually.js';
import { useUpstreams } from '../helpers/upstreams.js';

/*
 * What a stop closes is what the parts registered where they were made (src/lifecycle): this
 * checks it from outside. A Redis of its own, so the count of its clients is the gateway's.
 */

const upstreams = useUpstreams();
let redis: RedisServer;
let probe: Redis;

beforeAll(async () => {
  redis = await startRedisServer();
  probe = new Redis(redis.url, { lazyConnect: true });
  await probe.connect();
});
afterAll(async () => {
  probe.disconnect();
  await redis.stop();
});

const connectedClients = async () =>
  Number(/connected_clients:(\d+)/.exec(await probe.info('clients'))?.[1]);

const openConnections = (server: Server) =>
  new Promise<number>((resolve, reject) =>
    server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
  );

describe('a gateway that stops leaves nothing open', () => {
  it('when a gateway with Redis has served searches and chat, then its stop closes every Redis connection and every upstream connection it opened', async () => {
    const before = await connectedClients();
    const gw = await upstreams.serviceGateway('administrator', {}, { redisUrl: redis.url });
    expect((await request(gw.app).get('/api/search?q=lamp')).status).toBe(200);
    expect((await request(gw.app).get('/api/chat/channel-folders')).status).toBe(200);
    // The command connection and the subscribers of the single flight and the event bus.
    expect(await connectedClients()).toBeGreaterThanOrEqual(before + 3);
    expect(await openConnections(upstreams.search.server)).toBeGreaterThan(0);
    expect(await openConnections(upstreams.chat.server)).toBeGreaterThan(0);

    await gw.close();

    // Redis learns of a closed connection when it reads the FIN: it may take a moment.
    await eventually(async () => (await connectedClients()) === before, {
      what: 'Redis sees only the probe',
    });
    await eventually(async () => (await openConnections(upstreams.search.server)) === 0, {
      what: 'the search service sees no connection',
    });
    await eventually(async () => (await openConnections(upstreams.chat.server)) === 0, {
      what: 'the chat service sees no connection',
    });
  });
});

describe('a gateway says which cache it runs on', () => {
  const warning = 'REDIS_URL is not set: in-process cache and sessions; run a single instance only';
  const said = (gw: { logs: { lines(): Record<string, unknown>[] } }) =>
    gw.logs.lines().filter((line) => line['msg'] === warning).length;

  it('when no Redis is configured, then its start warns once that it must run alone; with Redis it does not', async () => {
    const alone = await upstreams.serviceGateway();
    const shared = await upstreams.serviceGateway('administrator', {}, { redisUrl: redis.url });
    expect(said(alone)).toBe(1);
    expect(said(shared)).toBe(0);
  });
});

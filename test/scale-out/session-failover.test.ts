import { createHash, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createChatSimulator, type ChatSimulator } from '../../simulators/chat/chat-simulator.js';
import {
  createSearchSimulator,
  type SearchSimulator,
} from '../../simulators/search/search-simulator.js';
import { startGatewayProcess, type GatewayProcess } from '../harness/chaos-gateway-process.js';
import {
  redisCli,
  startRedisCluster,
  startRedisSentinel,
  type RedisCluster,
  type RedisNode,
  type RedisSentinelSetup,
} from '../harness/redis-topologies.js';
import { eventually } from '../helpers/eventually.js';
import { APP_ORIGIN, BROWSER_HEADERS, SEARCH_TOKEN } from '../helpers/test-gateway.js';

/*
 * Contract section 7 on a real Sentinel set (master, replica, Sentinel) and built gateways as
 * child processes. Replicas: with the replica stopped (SIGSTOP) logins still answer 200, each
 * unconfirmed write counted; with a healthy replica a session survives the master's death.
 * Logout is final across a failover: a logout the stopped replica never received, the master
 * killed, that replica promoted, and the old cookie stays 401 on both instances and on a third
 * started after the promotion.
 */

let chat: ChatSimulator;
let search: SearchSimulator;
const gateways: GatewayProcess[] = [];
const clients: Redis[] = [];

beforeAll(async () => {
  chat = createChatSimulator();
  search = createSearchSimulator({ clientToken: SEARCH_TOKEN });
  await Promise.all([chat.listen(), search.listen()]);
});
afterAll(async () => {
  await Promise.all([chat?.close(), search?.close()]);
});
afterEach(async () => {
  for (const client of clients.splice(0)) client.disconnect();
  await Promise.all(gateways.splice(0).map((gw) => gw.dispose()));
});

/** An instance of one deployment (the same key prefix and secrets) on a Redis topology. */
async function gateway(prefix: string, redisEnv: Record<string, string>): Promise<GatewayProcess> {
  const admin = chat.credentials('administrator');
  const gw = await startGatewayProcess({
    upstreams: {
      searchOrigin: search.origin,
      searchToken: SEARCH_TOKEN,
      chatOrigin: chat.origin,
      chatEmail: admin.email,
      chatApiKey: admin.apiKey,
    },
    // REDIS_URL empty is unset: the Sentinels say where the master is.
    redisUrl: '',
    env: {
      ...redisEnv,
      REDIS_KEY_PREFIX: prefix,
      CHAT_AUTH_MODE: 'session',
      CHAT_EVENTS: 'off',
      SESSION_COOKIE_SECURE: 'false',
      CORS_ORIGINS: APP_ORIGIN,
    },
  });
  gateways.push(gw);
  return gw;
}

/** A plain client on one data node (no prefix), closed after the test. */
function nodeClient(port: number): Redis {
  const client = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1 });
  client.on('error', () => undefined);
  clients.push(client);
  return client;
}

async function login(gw: GatewayProcess): Promise<{ cookie: string; ms: number }> {
  const { email, password } = chat.credentials('member');
  const started = performance.now();
  const res = await fetch(`${gw.url}/api/auth/login`, {
    method: 'POST',
    headers: { ...BROWSER_HEADERS, 'Content-Type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  const ms = performance.now() - started;
  expect(res.status, await res.text()).toBe(200);
  return { cookie: res.headers.getSetCookie()[0]!.split(';')[0]!, ms };
}

const sessionStatus = async (gw: GatewayProcess, cookie: string) =>
  (await fetch(`${gw.url}/api/auth/session`, { headers: { Cookie: cookie } })).status;

/** The first answer that is not a 503 (an instance still finding the new master). */
const settledStatus = (gw: GatewayProcess, cookie: string) =>
  eventually(
    async () => {
      const status = await sessionStatus(gw, cookie);
      return status === 503 ? false : status;
    },
    { what: 'an answer from the new master', timeoutMs: 20_000 },
  );

async function unreplicated(gw: GatewayProcess): Promise<number> {
  const text = await (await fetch(`${gw.url}/metrics`)).text();
  return Number(/^gateway_session_writes_unreplicated_total (\d+)$/m.exec(text)?.[1]);
}

/** The hash tag of a cookie's session record (session-manager.ts, redis-session-store.ts). */
function idHashOf(cookie: string): string {
  const id = cookie.slice(cookie.indexOf('=') + 1);
  return createHash('sha256').update(id).digest('base64url');
}
const recordKey = (prefix: string, cookie: string) => `${prefix}session:v1:{${idHashOf(cookie)}}`;

/**
 * Writes more than the kernel's socket buffers hold on both ends of a replication link while
 * its replica is stopped, so that what the master writes next stays in the master's own
 * output buffer and dies with it (a stopped replica's socket would otherwise still receive
 * it, and the replica apply it once resumed). `tag` keeps the keys in one Cluster slot.
 */
async function clogReplication(port: number, prefix: string, tag: string): Promise<void> {
  const pipeline = nodeClient(port).pipeline();
  const filler = 'x'.repeat(1024 * 1024);
  for (let i = 0; i < 32; i += 1) pipeline.set(`${prefix}filler:{${tag}}:${i}`, filler);
  await pipeline.exec();
}

/**
 * Once the resumed replica has read what reached it and found its master gone: whether it
 * still holds `key`. Read in one transaction with its role: while it is a replica, no
 * instance can have written to it since.
 */
async function heldByReplica(node: RedisNode, key: string): Promise<boolean | 'promoted'> {
  const client = nodeClient(node.port);
  await eventually(
    async () => (await client.info('replication')).includes('master_link_status:down'),
    { what: 'the replica to lose its master', timeoutMs: 10_000 },
  );
  // A Cluster replica answers reads of its master's slots only after READONLY.
  await client.call('READONLY').catch(() => undefined);
  const [[, role], [, exists]] = (await client.multi().role().exists(key).exec()) as [
    [unknown, unknown[]],
    [unknown, number],
  ];
  return role[0] === 'slave' ? exists === 1 : 'promoted';
}

async function logout(gw: GatewayProcess, cookie: string): Promise<number> {
  const res = await fetch(`${gw.url}/api/auth/logout`, {
    method: 'POST',
    headers: { ...BROWSER_HEADERS, Cookie: cookie },
  });
  return res.status;
}

/**
 * After a failover that lost a logout's DEL: the old cookie is 401 on both instances, they
 * write the revocation back to the promoted master, and an instance started afterwards
 * (`third`) finds no record either. Returns that instance.
 */
async function expectStillRevoked(
  at: { a: GatewayProcess; b: GatewayProcess; cookie: string; key: string; promoted: RedisNode },
  third: () => Promise<GatewayProcess>,
): Promise<GatewayProcess> {
  expect(await settledStatus(at.a, at.cookie)).toBe(401);
  expect(await settledStatus(at.b, at.cookie)).toBe(401);
  // The instances write their revocations back to the new master once they reach it.
  const onPromoted = nodeClient(at.promoted.port);
  await eventually(async () => (await onPromoted.exists(at.key)) === 0, {
    what: 'the revocation to be written back to the promoted master',
    timeoutMs: 20_000,
  });
  const c = await third();
  expect(await sessionStatus(c, at.cookie)).toBe(401);
  return c;
}

describe('sessions on a Sentinel set whose replica fails', () => {
  let setup: RedisSentinelSetup;
  beforeEach(async () => {
    setup = await startRedisSentinel();
  }, 30_000);
  afterEach(() => setup?.stop());
  const onSentinel = () => ({
    REDIS_SENTINELS: setup.sentinels,
    REDIS_SENTINEL_MASTER: setup.masterName,
  });

  // A stopped replica's logins and a confirmed login surviving a failover: in-process, with
  // cache hits and breakers watched, in redis-bulkheads.test.ts.

  it('when a logout no replica received is lost in a failover, then the old cookie stays 401 on both instances and on one started after the promotion', async () => {
    const prefix = `failover:${randomUUID()}:`;
    const a = await gateway(prefix, onSentinel());
    const b = await gateway(prefix, onSentinel());
    const { cookie } = await login(a);
    expect(await sessionStatus(a, cookie)).toBe(200);
    expect(await sessionStatus(b, cookie)).toBe(200);
    const master = await setup.master();
    const replica = await setup.replica();
    const key = recordKey(prefix, cookie);

    replica.pause();
    await clogReplication(master.port, prefix, idHashOf(cookie));
    const before = await unreplicated(a);
    expect(await logout(a, cookie)).toBe(204);
    expect(await unreplicated(a)).toBeGreaterThan(before);
    await master.kill();
    replica.resume();
    // The replica never saw the DEL: promoted, it would serve the session again.
    expect(await heldByReplica(replica, key)).not.toBe(false);

    await setup.failedOver(master);
    const c = await expectStillRevoked({ a, b, cookie, key, promoted: replica }, () =>
      gateway(prefix, onSentinel()),
    );
    // Not a Redis outage in disguise: the new master serves logins. `a` may answer the old
    // cookie's 401 from the revocations it remembers before it has found the new master
    // itself, so its read of the fresh session waits out its 503s as the others do.
    const fresh = await login(c);
    expect(await settledStatus(a, fresh.cookie)).toBe(200);
  }, 90_000);
});

describe('sessions on a Redis Cluster whose replica fails', () => {
  let cluster: RedisCluster;
  beforeEach(async () => {
    cluster = await startRedisCluster();
  }, 60_000);
  afterEach(() => cluster?.stop());

  /** The replica of `master` (its `master_port` says so). */
  async function replicaOf(master: RedisNode): Promise<RedisNode> {
    for (const node of cluster.nodes) {
      if (node === master || !node.running) continue;
      if ((await redisCli(node.port, 'info', 'replication')).includes(`master_port:${master.port}`))
        return node;
    }
    throw new Error(`no replica of ${master.port}`);
  }

  it('when a logout no replica received is lost in a failover, then the old cookie stays 401 on both instances and on one started after the promotion', async () => {
    const prefix = `failover:${randomUUID()}:`;
    const onCluster = { REDIS_CLUSTER_NODES: cluster.seeds };
    const a = await gateway(prefix, onCluster);
    const b = await gateway(prefix, onCluster);
    const { cookie } = await login(a);
    expect(await sessionStatus(b, cookie)).toBe(200);
    const key = recordKey(prefix, cookie);
    const master = await cluster.masterOf(key);
    const replica = await replicaOf(master);

    replica.pause();
    await clogReplication(master.port, prefix, idHashOf(cookie));
    expect(await logout(a, cookie)).toBe(204);
    await master.kill();
    replica.resume();
    expect(await heldByReplica(replica, key)).not.toBe(false);

    await cluster.failedOver(master);
    await expectStillRevoked({ a, b, cookie, key, promoted: replica }, () =>
      gateway(prefix, onCluster),
    );
  }, 120_000);
});

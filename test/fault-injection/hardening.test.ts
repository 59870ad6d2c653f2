import { readdirSync } from 'node:fs';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SCENARIO_TIMEOUT_MS,
  coldPath,
  logTail,
  startGatewayProcess,
  startRedisServer,
  useChaosEnvironment,
  type GatewayProcess,
  type RedisServer,
} from './harness.js';

/*
 * The production build as a child process, tried the way an attacker or a failing dependency
 * would (issue: hardening): a descriptor limit, a stop with keep-alive clients and idle
 * sockets, a Redis out of memory.
 */

const env = useChaosEnvironment();

interface Reply {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
}

function get(
  url: string,
  path: string,
  options: { agent?: HttpAgent; headers?: Record<string, string> } = {},
) {
  return new Promise<Reply>((resolve, reject) => {
    const req = httpRequest(
      `${url}${path}`,
      { agent: options.agent, headers: options.headers },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Opens a TCP connection and resolves once it is established (or rejects). */
function openSocket(url: string): Promise<Socket> {
  const { port, hostname } = new URL(url);
  const socket = connect(Number(port), hostname);
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

describe('a process that may open only 300 descriptors', () => {
  it(
    'when a client opens hundreds of connections, then the cap holds them off and upstream calls still succeed with the breaker closed',
    async () => {
      const chaos = env();
      chaos.reset();
      const gateway = await startGatewayProcess({
        upstreams: chaos.endpoints,
        redisUrl: chaos.redis.url,
        openFilesLimit: 300,
      });
      const flood: Socket[] = [];
      const agent = new HttpAgent({ keepAlive: true, maxSockets: 1 });
      try {
        // A keep-alive connection of a well-behaved client, opened before the flood.
        expect((await get(gateway.url, '/healthz', { agent })).status).toBe(200);
        const attempts = Array.from({ length: 400 }, () =>
          openSocket(gateway.url).then(
            (socket) => {
              flood.push(socket);
              socket.on('error', () => undefined);
            },
            () => undefined,
          ),
        );
        await Promise.all(attempts);
        // What the flood holds of the process: the cap's worth, far from its 300 descriptors.
        const descriptors = readdirSync(`/proc/${gateway.pid}/fd`).length;
        // Uncached searches: each needs a new upstream connection, i.e. descriptors.
        const answers = [];
        for (let n = 0; n < 5; n += 1)
          answers.push(await get(gateway.url, coldPath(5000 + n), { agent }));
        const context = `descriptors ${descriptors}\n${answers.map((a) => `${a.status} ${a.body.slice(0, 120)}`).join('\n')}\n${logTail(gateway.output())}`;
        expect(descriptors, context).toBeLessThan(150);
        expect(
          answers.map((a) => a.status),
          context,
        ).toEqual([200, 200, 200, 200, 200]);
        const ready = JSON.parse((await get(gateway.url, '/readyz', { agent })).body) as {
          checks: { search: { circuit: string } };
        };
        expect(ready.checks.search.circuit, context).toBe('closed');
        expect(gateway.output(), context).not.toMatch(/EMFILE/);
      } finally {
        for (const socket of flood) socket.destroy();
        agent.destroy();
        await gateway.dispose();
      }
    },
    SCENARIO_TIMEOUT_MS,
  );
});

describe('a stop with keep-alive clients', () => {
  it(
    'when SIGTERM arrives while 24 keep-alive clients wait for answers, then every answer says Connection: close and no client meets a reset connection',
    async () => {
      const chaos = env();
      chaos.reset();
      const gateway = await startGatewayProcess({
        upstreams: chaos.endpoints,
        redisUrl: chaos.redis.url,
        env: {
          // The clients come back during the drain, whatever the load: they are answered about
          // 400 ms after the SIGTERM. A client that came back as the listener closed would meet
          // the kernel's reset of the accept queue, which no server can avoid.
          SHUTDOWN_DRAIN_DELAY_MS: '2000',
          SHUTDOWN_TIMEOUT_MS: '10000',
          SEARCH_TIMEOUT_MS: '3000',
        },
      });
      const clients = Array.from(
        { length: 24 },
        () => new HttpAgent({ keepAlive: true, maxSockets: 1 }),
      );
      try {
        // Each client's connection is warm and idle-alive before the answers it will wait for.
        await Promise.all(clients.map((agent) => get(gateway.url, '/healthz', { agent })));
        chaos.search.faults.add({ fault: { kind: 'delay', ms: 400 }, pathPrefix: '/v1/search' });
        const first = clients.map((agent, i) => get(gateway.url, coldPath(6000 + i), { agent }));
        await Promise.all(
          clients.map((_, i) =>
            chaos.search.received((r) => coldPath(6000 + i).endsWith(r.url.slice(10))),
          ),
        );
        gateway.signal('SIGTERM');
        const answers = await Promise.all(first);
        expect(answers.map((a) => a.status)).toEqual(clients.map(() => 200));
        expect(answers.map((a) => a.headers.connection)).toEqual(clients.map(() => 'close'));
        // Their next request goes on a new connection: served during the drain, refused after;
        // never sent on a socket the gateway is closing.
        const next = await Promise.all(
          clients.map((agent) =>
            get(gateway.url, '/healthz', { agent }).then(
              (r) => `status ${r.status}`,
              (error: NodeJS.ErrnoException) => error.code ?? error.message,
            ),
          ),
        );
        expect(
          next.filter((outcome) => outcome === 'ECONNRESET' || outcome === 'socket hang up'),
        ).toEqual([]);
        const exit = await gateway.exit;
        expect(exit.code, `${JSON.stringify(exit)} ${logTail(gateway.output())}`).toBe(0);
      } finally {
        for (const agent of clients) agent.destroy();
        await gateway.dispose();
      }
    },
    SCENARIO_TIMEOUT_MS,
  );

  it(
    'when a client holds a connection it never used, then the stop closes it and exits 0 long before SHUTDOWN_TIMEOUT_MS',
    async () => {
      const chaos = env();
      chaos.reset();
      const gateway = await startGatewayProcess({
        upstreams: chaos.endpoints,
        redisUrl: chaos.redis.url,
        env: {
          SHUTDOWN_DRAIN_DELAY_MS: '200',
          SHUTDOWN_TIMEOUT_MS: '10000',
          // The socket's own bounds are far past SHUTDOWN_TIMEOUT_MS: only the stop can close it.
          HEADERS_TIMEOUT_MS: '60000',
          REQUEST_TIMEOUT_MS: '60000',
          CLIENT_IDLE_TIMEOUT_MS: '60000',
        },
      });
      const idle = await openSocket(gateway.url);
      idle.on('error', () => undefined);
      // Closed by the gateway (a FIN or a reset: either way the client learns at once).
      const closedByServer = new Promise((resolve) => idle.once('close', resolve));
      gateway.signal('SIGTERM');
      const exit = await gateway.exit;
      await closedByServer;
      // Exit 0 is the stop's verdict that it finished before SHUTDOWN_TIMEOUT_MS cut anything
      // (a forced stop exits 1): the idle socket was closed by the stop, not waited out.
      expect(exit.code, `${JSON.stringify(exit)} ${logTail(gateway.output())}`).toBe(0);
    },
    SCENARIO_TIMEOUT_MS,
  );
});

describe('a Redis out of memory (maxmemory 2 MB, noeviction)', () => {
  let redis: RedisServer;
  let gateway: GatewayProcess;
  beforeAll(async () => {
    redis = await startRedisServer(['--maxmemory', '2mb', '--maxmemory-policy', 'noeviction']);
  });
  afterAll(async () => {
    await gateway?.dispose();
    await redis?.stop();
  });

  it(
    'when cache writes are refused, then logged-in users stay logged in and every answer is still served',
    async () => {
      const chaos = env();
      chaos.reset();
      const origin = 'https://app.example.test';
      gateway = await startGatewayProcess({
        upstreams: chaos.endpoints,
        redisUrl: redis.url,
        env: {
          CHAT_AUTH_MODE: 'session',
          CHAT_EMAIL: '',
          CHAT_API_KEY: '',
          SESSION_COOKIE_SECURE: 'false',
          CORS_ORIGINS: origin,
          // Whatever the cache's budget: here Redis is filled by something else, so the cache's
          // own writes are tried and refused (the budget is cache-memory.test.ts's subject).
          CACHE_REDIS_MAX_BYTES: String(1024 * 1024 * 1024),
        },
      });
      const member = chaos.chat.credentials('member');
      const login = await fetch(`${gateway.url}/api/auth/login`, {
        method: 'POST',
        headers: { origin, 'x-csrf': '1', 'content-type': 'application/json' },
        body: JSON.stringify({ email: member.email, password: member.password }),
      });
      expect(login.status, await login.clone().text()).toBe(200);
      const cookie = login.headers.getSetCookie()[0]!.split(';')[0]!;

      // Fill Redis until it refuses writes, even tiny ones (a flight lock is a 36-byte token:
      // if those still fit, half of the cache's calls succeed and its breaker rightly stays shut).
      const filler = new Redis(redis.url);
      let n = 0;
      for (const size of [64 * 1024, 4096, 256, 16]) {
        for (;;) {
          n += 1;
          const refused = await filler.set(`junk:${n}`, 'x'.repeat(size)).then(
            () => false,
            (error: Error) => /OOM/.test(error.message),
          );
          if (refused) break;
        }
      }
      filler.disconnect();

      // Bursts of uncached searches (each a refused cache write), each followed by the logged-in
      // user's own requests: a breaker shared by every use of Redis would open on the writes.
      const statuses: Record<string, number[]> = { session: [], drafts: [], search: [] };
      const headers = { cookie };
      for (let round = 0; round < 5; round += 1) {
        const burst = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            get(gateway.url, coldPath(7000 + round * 20 + i), { headers }),
          ),
        );
        statuses['search']!.push(...burst.map((r) => r.status));
        for (let n = 0; n < 3; n += 1) {
          statuses['session']!.push(
            (await get(gateway.url, '/api/auth/session', { headers })).status,
          );
          statuses['drafts']!.push(
            (await get(gateway.url, '/api/chat/drafts', { headers })).status,
          );
        }
      }
      const context = `${JSON.stringify(statuses)}\n${logTail(gateway.output())}`;
      for (const list of Object.values(statuses)) {
        expect(list, context).toEqual(list.map(() => 200));
      }
      expect(gateway.output(), context).toMatch(/OOM|cache write failed/);
      // The cache's writes failed; whether its own breaker opens depends on how many of its
      // calls still succeed (reads, and the fleet's flight locks when a tiny write fits), and
      // either way the sessions' and limits' breakers never opened.
      expect(gateway.output(), context).not.toMatch(/circuit redis-sessions open/);
      expect(gateway.output(), context).not.toMatch(/circuit redis-limits open/);
    },
    SCENARIO_TIMEOUT_MS,
  );
});

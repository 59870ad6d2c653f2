import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { Agent, Client } from 'undici';
import { summarize, type LoadSummary } from './chaos-contract.js';
import { coldPath, HOT_PATHS, searchJudge, type ChaosEnvironment } from './chaos-environment.js';
import { startGatewayProcess, type GatewayProcess } from './chaos-gateway-process.js';
import { send, type Answer } from './chaos-load.js';
import { startRedisServer, type RedisServer } from './chaos-processes.js';

/*
 * Hostile clients and a failing dependency under load (`npm run chaos`, issue: hardening):
 * while one attack runs against the production build, well-behaved clients keep searching on
 * connections they opened before it, and the gateway's memory and descriptors are sampled.
 * What is held: every well-behaved request answered, memory and descriptors bounded.
 */

export interface AbuseResult {
  name: string;
  /** What the attacker managed to send (connections, requests, bytes), for the table. */
  attack: string;
  summary: LoadSummary;
  peakRssMb: number;
  peakDescriptors: number;
  maxConnections: number;
  gatewayOutput: string;
}

/** Limits small enough that every bound acts within a short run. */
const LIMITS = {
  MAX_CONNECTIONS: '200',
  HEADERS_TIMEOUT_MS: '2000',
  REQUEST_TIMEOUT_MS: '4000',
  CLIENT_IDLE_TIMEOUT_MS: '2000',
  RESPONSE_BUFFER_MAX_BYTES: '262144',
};

interface Attack {
  name: string;
  redisArgs?: string[];
  env?: Record<string, string>;
  /** Runs until `stop` says so; returns a one-line account of what it sent. */
  run(gateway: GatewayProcess, stop: () => boolean, redis: RedisServer): Promise<string>;
}

function openSocket(url: string): Promise<Socket | undefined> {
  const { port, hostname } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname, () => resolve(socket));
    socket.on('error', () => resolve(undefined));
    socket.on('close', () => resolve(undefined));
  });
}

/** Samples the process's resident memory and open descriptors every 100 ms. */
function sample(pid: number) {
  let rss = 0;
  let fds = 0;
  const timer = setInterval(() => {
    try {
      const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
      rss = Math.max(rss, Number(kb ?? 0) / 1024);
      fds = Math.max(fds, readdirSync(`/proc/${pid}/fd`).length);
    } catch {
      // the process is gone
    }
  }, 100);
  return { stop: () => (clearInterval(timer), { rss, fds }) };
}

export const ATTACKS: readonly Attack[] = [
  {
    name: 'connection flood (idle sockets, 4× the cap)',
    async run(gateway, stop) {
      let opened = 0;
      const held = new Set<Socket>();
      while (!stop()) {
        const batch = await Promise.all(Array.from({ length: 100 }, () => openSocket(gateway.url)));
        for (const socket of batch) {
          if (!socket || socket.destroyed) continue;
          held.add(socket);
          opened += 1;
        }
        for (const socket of held) if (socket.destroyed) held.delete(socket);
        if (held.size > 800) await sleep(50);
      }
      for (const socket of held) socket.destroy();
      return `${opened} connections opened`;
    },
  },
  {
    name: 'slowloris (300 sockets, a header byte a second)',
    async run(gateway, stop) {
      const sockets = (
        await Promise.all(Array.from({ length: 300 }, () => openSocket(gateway.url)))
      ).filter((s): s is Socket => s !== undefined);
      // Read (and drop) whatever the gateway answers, so that its close is seen.
      for (const socket of sockets) socket.resume();
      const request = 'GET /api/search?q=slow HTTP/1.1\r\nHost: x\r\nX-Slow: ' + 'a'.repeat(1000);
      for (let i = 0; !stop(); i += 1) {
        for (const socket of sockets)
          if (!socket.destroyed) socket.write(request[i % request.length]!);
        await sleep(1000);
      }
      const cut = sockets.filter((s) => s.destroyed || s.readableEnded).length;
      for (const socket of sockets) socket.destroy();
      return `${sockets.length} sockets, ${cut} cut by the gateway`;
    },
  },
  {
    name: 'never-reading clients (100 sockets pipelining searches)',
    async run(gateway, stop) {
      let sent = 0;
      const sockets = new Set<Socket>();
      const request = 'GET /api/search?q=wireless+headphones&k=10 HTTP/1.1\r\nHost: x\r\n\r\n';
      while (!stop()) {
        while (sockets.size < 100) {
          const socket = await openSocket(gateway.url);
          if (!socket) break;
          socket.pause(); // never read
          sockets.add(socket);
          socket.once('close', () => sockets.delete(socket));
        }
        for (const socket of sockets) if (socket.write(request.repeat(20))) sent += 20;
        await sleep(100);
      }
      for (const socket of sockets) socket.destroy();
      return `${sent} pipelined requests written`;
    },
  },
  {
    name: 'forged session cookies (a new random cookie per request)',
    env: {
      CHAT_AUTH_MODE: 'session',
      CHAT_EMAIL: '',
      CHAT_API_KEY: '',
      SESSION_COOKIE_SECURE: 'false',
    },
    async run(gateway, stop, redis) {
      const agent = new Agent({ connections: 16 });
      let sent = 0;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (!stop()) {
            const cookie = `bff_session=${randomBytes(32).toString('base64url')}`;
            await send(agent, gateway.url, '/api/chat/drafts', {
              timeoutMs: 5000,
              judge: () => undefined,
              headers: { cookie },
            });
            sent += 1;
          }
        }),
      );
      await agent.destroy();
      const inspector = new Redis(redis.url);
      const forged = (await inspector.keys('*ratelimit:session:*')).length;
      const sessions = (await inspector.keys('*session:v1:*')).length;
      inspector.disconnect();
      return `${sent} requests; ${forged} session counters and ${sessions} session records created`;
    },
  },
  {
    name: 'Redis out of memory (maxmemory 2 MB, noeviction)',
    redisArgs: ['--maxmemory', '2mb', '--maxmemory-policy', 'noeviction'],
    async run(_gateway, stop, redis) {
      const filler = new Redis(redis.url);
      let refused = 0;
      for (let n = 0; !stop(); n += 1) {
        await filler.set(`junk:${n}`, 'x'.repeat(16 * 1024)).catch(() => (refused += 1));
        if (refused > 0) await sleep(20);
      }
      filler.disconnect();
      return `${refused} filler writes refused (Redis full)`;
    },
  },
];

/** Runs one attack for `durationMs` while 8 well-behaved clients search (hot and cold keys). */
export async function runAbuse(
  env: ChaosEnvironment,
  attack: Attack,
  durationMs: number,
): Promise<AbuseResult> {
  env.reset();
  const redis = attack.redisArgs ? await startRedisServer(attack.redisArgs) : env.redis;
  const gateway = await startGatewayProcess({
    upstreams: env.endpoints,
    redisUrl: redis.url,
    env: { ...LIMITS, ...attack.env },
  });
  // One keep-alive connection per well-behaved client, opened before the attack: a new
  // connection during a flood is refused by design (the cap), an existing one must keep working.
  const clients = Array.from({ length: 8 }, () => new Client(gateway.url));
  const peaks = sample(gateway.pid);
  const judge = searchJudge(env, {});
  try {
    // The well-behaved clients' connections exist before the attack starts.
    const warm = await Promise.all(
      clients.map((client, i) =>
        send(client, gateway.url, HOT_PATHS[i % HOT_PATHS.length]!, { timeoutMs: 5000, judge }),
      ),
    );
    if (warm.some((answer) => answer.status !== 200)) throw new Error('the warm-up failed');
    const until = Date.now() + durationMs;
    const stop = () => Date.now() > until;
    const attacking = attack.run(gateway, stop, redis);
    const answers: Answer[] = [];
    await Promise.all(
      Array.from({ length: 8 }, async (_, worker) => {
        for (let n = worker; !stop(); n += 8) {
          const path = n % 3 === 0 ? coldPath(20_000 + n) : HOT_PATHS[n % HOT_PATHS.length]!;
          answers.push(await send(clients[worker]!, gateway.url, path, { timeoutMs: 5000, judge }));
        }
      }),
    );
    const account = await attacking;
    const { rss, fds } = peaks.stop();
    return {
      name: attack.name,
      attack: account,
      summary: summarize(answers),
      peakRssMb: rss,
      peakDescriptors: fds,
      maxConnections: Number(LIMITS.MAX_CONNECTIONS),
      gatewayOutput: gateway.output(),
    };
  } finally {
    peaks.stop();
    await Promise.all(clients.map((client) => client.destroy()));
    await gateway.dispose();
    if (redis !== env.redis) await redis.stop();
  }
}

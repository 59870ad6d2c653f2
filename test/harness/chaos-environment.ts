import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { Agent } from 'undici';
import { createChatSimulator, type ChatSimulator } from '../../simulators/chat/chat-simulator.js';
import {
  createSearchSimulator,
  type SearchSimulator,
} from '../../simulators/search/search-simulator.js';
import type { Fault } from '../../simulators/sim-faults.js';
import { judgeSearch, type AllowedErrors } from './chaos-contract.js';
import { send, type Answer, type Judge } from './chaos-load.js';
import type { UpstreamEndpoints } from './chaos-gateway-process.js';
import { startRedisServer, type RedisServer } from './chaos-processes.js';

/*
 * What every chaos scenario shares: both simulated upstreams in this process, a private Redis,
 * the request mix (a few hot keys for caching, stale serving and single flight, plus unique
 * "cold" queries that always need the upstream), and the checks around a run.
 */

export const SEARCH_TOKEN = 'chaos-search-token-5b1d';

export interface ChaosEnvironment {
  readonly search: SearchSimulator;
  readonly chat: ChatSimulator;
  readonly redis: RedisServer;
  readonly endpoints: UpstreamEndpoints;
  /** Search calls the simulator has received since the last reset. */
  searchCalls(): number;
  /** Clears faults and recorded requests. */
  reset(): void;
  /** The products a page must hold, straight from the simulator's catalogue. */
  readonly expectedNames: (q: string, k: number) => readonly string[];
  close(): Promise<void>;
}

export async function createChaosEnvironment(): Promise<ChaosEnvironment> {
  const search = createSearchSimulator({ clientToken: SEARCH_TOKEN });
  const chat = createChatSimulator();
  await Promise.all([search.listen(), chat.listen()]);
  let redis: RedisServer;
  try {
    redis = await startRedisServer();
  } catch (error) {
    await Promise.all([search.close(), chat.close()]);
    throw error;
  }
  const admin = chat.credentials('administrator');
  return {
    search,
    chat,
    redis,
    endpoints: {
      searchOrigin: search.origin,
      searchToken: SEARCH_TOKEN,
      chatOrigin: chat.origin,
      chatEmail: admin.email,
      chatApiKey: admin.apiKey,
    },
    searchCalls: () => search.requests.filter((r) => r.pathname === '/v1/search').length,
    reset() {
      for (const sim of [search, chat]) {
        sim.faults.clear();
        sim.requests.length = 0;
      }
    },
    expectedNames: (q, k) =>
      search.catalogue
        .search(q)
        .slice(0, k)
        .map((ranked) => ranked.product.name),
    async close() {
      await Promise.all([search.close(), chat.close(), redis.stop()]);
    },
  };
}

/** Distinct keys, several sorts and page sizes: each is one cache entry once warm. */
export const HOT_PATHS = [
  '/api/search?q=wireless+headphones',
  '/api/search?q=coffee&k=5&sort=price_asc',
  '/api/search?q=laptop&sort=rating',
  '/api/search?q=running+shoes&k=8&sort=price_desc',
  '/api/search?q=desk+lamp&k=3',
  '/api/search?q=backpack&sort=price_asc',
] as const;

const WORDS = ['headphones', 'coffee', 'laptop', 'backpack', 'lamp', 'shoes'];

/** A query nobody asked before in this gateway's life: always a miss. */
export function coldPath(n: number): string {
  return `/api/search?q=${WORDS[n % WORDS.length]}+${n}&k=5`;
}

/** Two of three requests go to hot keys, one to a cold query. */
export function pathFor(n: number): string {
  return n % 3 === 2 ? coldPath(n) : HOT_PATHS[n % HOT_PATHS.length]!;
}

/** A judge for a scenario; references are the warm-up's healthy answers. */
export function searchJudge(
  env: ChaosEnvironment,
  allowedErrors: AllowedErrors,
  references: ReadonlyMap<string, string> = new Map(),
): Judge {
  return judgeSearch({ expectedNames: env.expectedNames, references, allowedErrors });
}

export interface WarmUp {
  answers: Answer[];
  /** Upstream search calls it caused: one per hot key when single flight holds. */
  upstreamCalls: number;
  references: Map<string, string>;
}

/**
 * Every hot key requested `copies` times at once on an empty cache: concurrent misses on one
 * key must make one upstream call. The healthy answers become the run's references.
 */
export async function warmUp(
  env: ChaosEnvironment,
  baseUrl: string,
  copies: number,
): Promise<WarmUp> {
  const references = new Map<string, string>();
  const judge = searchJudge(env, {});
  const recording: Judge = (path, received) => {
    const verdict = judge(path, received);
    if (verdict === undefined && !references.has(path)) {
      const list = JSON.parse(received.body) as { itemListElement: unknown };
      references.set(path, JSON.stringify(list.itemListElement));
    }
    return verdict;
  };
  const before = env.searchCalls();
  const agent = new Agent({ connections: copies * HOT_PATHS.length });
  try {
    const answers = await Promise.all(
      HOT_PATHS.flatMap((path) =>
        Array.from({ length: copies }, () =>
          send(agent, baseUrl, path, { timeoutMs: 10_000, judge: recording }),
        ),
      ),
    );
    return { answers, upstreamCalls: env.searchCalls() - before, references };
  } finally {
    await agent.close();
  }
}

/**
 * After the fault: fresh queries until one is answered 200, at most `attempts` of them
 * `everyMs` apart (an open circuit needs its open time to pass and one probe to succeed).
 */
export async function recover(
  baseUrl: string,
  judge: Judge,
  options: { firstN: number; attempts?: number; everyMs?: number },
): Promise<Answer[]> {
  const agent = new Agent({ connections: 1 });
  const tries: Answer[] = [];
  try {
    for (let i = 0; i < (options.attempts ?? 10); i += 1) {
      if (i > 0) await sleep(options.everyMs ?? 400);
      const answer = await send(agent, baseUrl, coldPath(options.firstN + i), {
        timeoutMs: 10_000,
        judge,
      });
      tries.push(answer);
      if (answer.status === 200) break;
    }
    return tries;
  } finally {
    await agent.close();
  }
}

/**
 * Installs `count` single-use rules cycling through `faults`, so one fault window mixes them.
 * Clearing the plan ends the window early.
 */
export function rotateFaults(env: ChaosEnvironment, faults: readonly Fault[], count = 5000): void {
  for (let i = 0; i < count; i += 1) {
    env.search.faults.add({
      fault: faults[i % faults.length]!,
      pathPrefix: '/v1/search',
      times: 1,
    });
  }
}

/** Keys of search entries the gateway wrote under its prefix, read with a plain client. */
export async function searchKeys(redisUrl: string, prefix: string): Promise<string[]> {
  const redis = new Redis(redisUrl, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  try {
    await redis.connect();
    const found: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}search:v3:*`, 'COUNT', 500);
      cursor = next;
      found.push(...keys);
    } while (cursor !== '0');
    return found;
  } finally {
    redis.disconnect();
  }
}

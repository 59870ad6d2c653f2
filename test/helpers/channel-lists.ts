import type request from 'supertest';
import { afterEach, beforeEach } from 'vitest';
import type { ChatChannel, CredentialKind } from '../../simulators/chat/chat-simulator.js';
import type { Upstreams } from './upstreams.js';

/** One channel of `GET /api/chat/channels` (contract v4 section 2). */
export interface ListedChannel {
  id: number;
  name: string;
  description: string;
  private: boolean;
}

/** The channels of an answer, as the gateway sent them. */
export const channelsOf = (res: request.Response): ListedChannel[] =>
  (res.body as { channels: ListedChannel[] }).channels;

/** The names of an answer's channels, in the gateway's order. */
export const channelNames = (res: request.Response): string[] => channelsOf(res).map((c) => c.name);

/** Each seeded user's own private channel (simulators/chat/chat-seed-channels.ts). */
export const OWN_PRIVATE_CHANNEL = {
  owner: 'ada-board',
  administrator: 'grace-ops',
  moderator: 'moe-moderation',
  member: 'marie-lab',
  guest: 'gus-visitors',
} as const satisfies Partial<Record<CredentialKind, string>>;

/**
 * The simulator lives for the whole file: the channels a test adds or renames are put back
 * after it, so that every test starts from the seeded realm.
 */
export function keepSeededChannels(upstreams: Upstreams): void {
  let seeded: readonly ChatChannel[] = [];
  beforeEach(() => {
    seeded = upstreams.chat.realm.channels;
  });
  afterEach(() => {
    upstreams.chat.realm.channels = seeded;
  });
}

/** How many `GET /streams` calls carried that user's own credentials. */
export const streamCallsBy = (upstreams: Upstreams, kind: CredentialKind): number =>
  upstreams.chat.control.requestsBy(upstreams.chat.credentials(kind).userId, '/streams').length;

/**
 * The value of `gateway_cache_requests_total{resource="channels", result}` in a /metrics text.
 * Read here rather than with promtool.ts's sample(), which needs promtool on the machine.
 */
export function channelCacheCount(exposition: string, result: string): number | undefined {
  return cacheCount(exposition, 'channels', result);
}

/** gateway_cache_requests_total{resource, result} in a scrape, or undefined when absent. */
export function cacheCount(
  exposition: string,
  resource: string,
  result: string,
): number | undefined {
  const wanted = new Map([
    ['resource', resource],
    ['result', result],
  ]);
  for (const line of exposition.split('\n')) {
    const match = /^gateway_cache_requests_total\{([^}]*)\} (\S+)$/.exec(line);
    if (!match) continue;
    const labels = new Map(
      [...match[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!] as const),
    );
    const same =
      labels.size === wanted.size && [...wanted].every(([key, value]) => labels.get(key) === value);
    if (same) return Number(match[2]);
  }
  return undefined;
}

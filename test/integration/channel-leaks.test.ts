import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { CredentialKind } from '../../simulators/chat/chat-simulator.js';
import {
  OWN_PRIVATE_CHANNEL,
  channelNames,
  keepSeededChannels,
  streamCallsBy,
} from '../helpers/channel-lists.js';
import { createTestClock, type TestClock } from '../helpers/test-clock.js';
import type { TestGateway } from '../helpers/test-gateway.js';
import { deletePrefix } from '../helpers/test-redis.js';
import { useUpstreams } from '../helpers/upstreams.js';

/*
 * GET /api/chat/channels is cached per chat user (contract v4 sections 2 and 4): no user ever
 * gets another's private channel, whoever asks first, along every path an answer can take:
 * the hit path, a 304, a miss collapsed into another instance's call, a background refresh,
 * a stale answer. The member Marie and the moderator Moe each have a private channel only they
 * see (simulators/chat/chat-seed-channels.ts).
 */

const upstreams = useUpstreams();
keepSeededChannels(upstreams);

type Kind = keyof typeof OWN_PRIVATE_CHANNEL;
const MARIE = 'member' satisfies Kind;
const MOE = 'moderator' satisfies Kind;
const PRIVATE_CHANNELS = [...Object.values(OWN_PRIVATE_CHANNEL), 'Leadership'];

/** The answer is that user's own list: their private channel, nobody else's. */
function expectOwnList(res: request.Response, kind: Kind): void {
  expect(res.status, res.text).toBe(200);
  const names = channelNames(res);
  expect(names).toContain(OWN_PRIVATE_CHANNEL[kind]);
  for (const other of PRIVATE_CHANNELS.filter((name) => name !== OWN_PRIVATE_CHANNEL[kind])) {
    expect(names, `${kind} must not see ${other}`).not.toContain(other);
  }
}

/** An error answer that carries no channel list at all, nobody's private channel included. */
function expectErrorWithoutList(res: request.Response, status: number): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  expect(res.body).not.toHaveProperty('channels');
  for (const name of PRIVATE_CHANNELS) expect(res.text).not.toContain(name);
}

/** Session-mode gateway options: on the test Redis or in process, with a test clock if given. */
function sessionOptions(
  cache: 'memory' | 'redis',
  env: Record<string, string> = {},
  clock?: TestClock,
) {
  return {
    cache,
    env: { ...upstreams.sessionEnv, ...env },
    ...(clock ? { now: clock.now } : {}),
  };
}

/**
 * Marie and Moe logged in on one gateway; `ask(kind)` lists that user's channels, on that
 * gateway or on another instance sharing its Redis.
 */
async function twoUsers(gw: TestGateway) {
  const cookies: Partial<Record<Kind, string>> = {
    [MARIE]: await upstreams.login(gw, MARIE),
    [MOE]: await upstreams.login(gw, MOE),
  };
  return {
    ask: (kind: Kind, headers: Record<string, string> = {}, on: TestGateway = gw) =>
      request(on.app)
        .get('/api/chat/channels')
        .set({ 'Accept-Encoding': 'identity', Cookie: cookies[kind]!, ...headers }),
  };
}

const streamCalls = (kind: CredentialKind) => streamCallsBy(upstreams, kind);

/**
 * Windows a test clock walks through: fresh 10 s, then stale 20 s. A per-user list has no
 * stale-if-error window (it has no such variable), while shared entries keep theirs an hour.
 */
const WINDOWS = {
  CHANNELS_CACHE_TTL_SECONDS: '10',
  CHANNELS_CACHE_STALE_SECONDS: '20',
  CHANNEL_FOLDERS_CACHE_STALE_IF_ERROR_SECONDS: '3600',
  CACHE_TTL_JITTER_PERCENT: '0',
};

describe.each(['redis', 'memory'] as const)('channel lists stay per user (%s)', (cache) => {
  it.each([
    [MARIE, MOE],
    [MOE, MARIE],
  ] as const)(
    'when %s asks and then %s asks, then each gets their own list from their own upstream call, and on asking again a HIT of their own list',
    async (first, second) => {
      const gw = await upstreams.gateway(sessionOptions(cache));
      const { ask } = await twoUsers(gw);

      const a = await ask(first);
      expectOwnList(a, first);
      expect(a.headers['x-cache']).toBe('MISS');
      await gw.loader.settled(); // the entry is written after the answer
      const b = await ask(second);
      expectOwnList(b, second);
      expect(b.headers['x-cache']).toBe('MISS');
      expect(streamCalls(first)).toBe(1);
      expect(streamCalls(second)).toBe(1);
      await gw.loader.settled();

      const againA = await ask(first);
      const againB = await ask(second);
      expect(againA.headers['x-cache']).toBe('HIT');
      expect(againB.headers['x-cache']).toBe('HIT');
      expect(againA.text).toBe(a.text);
      expect(againB.text).toBe(b.text);
      expect(streamCalls(first)).toBe(1);
      expect(streamCalls(second)).toBe(1);
    },
  );

  it("when Moe sends Marie's ETag in If-None-Match, then he gets 200 with his own list, not a 304", async () => {
    const gw = await upstreams.gateway(sessionOptions(cache));
    const { ask } = await twoUsers(gw);
    const marie = await ask(MARIE);
    expectOwnList(marie, MARIE);
    await gw.loader.settled();
    const marieTag = marie.headers['etag'] as string;
    // Marie's own revalidation is a 304: the tag is a live one.
    expect((await ask(MARIE, { 'If-None-Match': marieTag })).status).toBe(304);

    for (const ifNoneMatch of [marieTag, `W/${marieTag}`, `"other", ${marieTag}`]) {
      const moe = await ask(MOE, { 'If-None-Match': ifNoneMatch });
      expectOwnList(moe, MOE);
      expect(moe.headers['etag']).not.toBe(marieTag);
      await gw.loader.settled();
    }
    expect(streamCalls(MOE)).toBe(1);
  });

  it('when a compressed answer is stored for Marie, then Moe asking for the same coding gets his own list', async () => {
    const gw = await upstreams.gateway(sessionOptions(cache, { COMPRESSION_MIN_BYTES: '0' }));
    const { ask } = await twoUsers(gw);
    const gzip = { 'Accept-Encoding': 'gzip' };
    const marie = await ask(MARIE, gzip);
    expect(marie.headers['content-encoding']).toBe('gzip');
    expectOwnList(marie, MARIE);
    await gw.loader.settled();
    // A hit keeps the compressed bytes with Marie's entry.
    expect((await ask(MARIE, gzip)).headers['x-cache']).toBe('HIT');
    await gw.loader.settled();
    const moe = await ask(MOE, gzip);
    expect(moe.headers['content-encoding']).toBe('gzip');
    expectOwnList(moe, MOE);
    expect(moe.headers['x-cache']).toBe('MISS');
  });

  it('when a list is refreshed in the background, then the refresh calls with the asker’s credentials and the other user still gets their own list', async () => {
    const clock = createTestClock();
    const gw = await upstreams.gateway(sessionOptions(cache, WINDOWS, clock));
    const { ask } = await twoUsers(gw);
    const marie = await ask(MARIE);
    const moe = await ask(MOE);
    expectOwnList(marie, MARIE);
    expectOwnList(moe, MOE);
    await gw.loader.settled();

    // Past the TTL, inside the stale window; Marie's channel is renamed so the refresh shows.
    clock.advance(15_000);
    upstreams.chat.control.updateChannel(7, { name: 'marie-lab-2' });
    const stale = await ask(MARIE);
    expect(stale.headers['x-cache']).toBe('STALE');
    expect(stale.text).toBe(marie.text);
    await gw.loader.settled();
    expect(streamCalls(MARIE)).toBe(2);
    expect(streamCalls(MOE)).toBe(1);

    const refreshed = await ask(MARIE);
    expect(refreshed.headers['x-cache']).toBe('HIT');
    expect(channelNames(refreshed)).toContain('marie-lab-2');

    // Moe's own entry is just as stale: his list, refreshed with his own credentials.
    const moeStale = await ask(MOE);
    expect(moeStale.headers['x-cache']).toBe('STALE');
    expect(moeStale.text).toBe(moe.text);
    expect(channelNames(moeStale)).not.toContain('marie-lab-2');
    await gw.loader.settled();
    expect(streamCalls(MOE)).toBe(2);
    expect(streamCalls(MARIE)).toBe(2);
    const moeFresh = await ask(MOE);
    expect(moeFresh.headers['x-cache']).toBe('HIT');
    expectOwnList(moeFresh, MOE);
    expect(channelNames(moeFresh)).not.toContain('marie-lab-2');
  });

  it('when the chat server fails inside the stale window, then Marie gets her stale list and Moe, who has no entry, the error, never her list', async () => {
    const clock = createTestClock();
    const gw = await upstreams.gateway(sessionOptions(cache, WINDOWS, clock));
    const { ask } = await twoUsers(gw);
    const marie = await ask(MARIE);
    expectOwnList(marie, MARIE);
    await gw.loader.settled();

    clock.advance(15_000);
    upstreams.chat.faults.add({
      fault: { kind: 'status', status: 500 },
      pathPrefix: '/api/v1/streams',
    });
    const stale = await ask(MARIE);
    expect(stale.status).toBe(200);
    expect(stale.headers['x-cache']).toBe('STALE');
    expect(stale.text).toBe(marie.text);

    const moe = await ask(MOE);
    expectErrorWithoutList(moe, 502);
    expect(moe.body).toMatchObject({ code: 'UPSTREAM_ERROR', source: 'chat' });
    expect(streamCalls(MOE)).toBe(1);
  });

  it('when the chat server fails past the TTL plus the stale window, then Marie gets the error, not her old list, though stale-if-error is longer', async () => {
    const clock = createTestClock();
    const gw = await upstreams.gateway(sessionOptions(cache, WINDOWS, clock));
    const { ask } = await twoUsers(gw);
    const marie = await ask(MARIE);
    expectOwnList(marie, MARIE);
    await gw.loader.settled();

    // 10 s TTL + 20 s stale window are over: a per-user entry has no stale-if-error window,
    // whatever the shared ones keep (contract v4 section 2).
    clock.advance(31_000);
    upstreams.chat.faults.add({
      fault: { kind: 'status', status: 500 },
      pathPrefix: '/api/v1/streams',
    });
    const late = await ask(MARIE);
    expectErrorWithoutList(late, 502);
    expect(late.body).toMatchObject({ code: 'UPSTREAM_ERROR', source: 'chat' });
    expect(late.headers['x-cache']).not.toBe('STALE');
    expect(streamCalls(MARIE)).toBeGreaterThan(1);
  });
});

describe('channel lists stay per user across instances', () => {
  it('when Marie asks instance 1 and Moe instance 2 at the same moment, then each gets their own list from one call per user', async () => {
    const shared = `channels:${randomUUID()}:`;
    const options = sessionOptions('redis', { REDIS_KEY_PREFIX: shared });
    const one = await upstreams.gateway(options);
    const two = await upstreams.gateway(options);
    try {
      // Sessions live in the shared Redis too: a login on one instance holds on the other.
      const { ask } = await twoUsers(one);
      // Each call is held long enough for every request to arrive while the first is open.
      upstreams.chat.faults.add({
        fault: { kind: 'delay', ms: 600 },
        pathPrefix: '/api/v1/streams',
      });
      const [marieOnOne, moeOnTwo, marieOnTwo] = await Promise.all([
        ask(MARIE, {}, one),
        ask(MOE, {}, two),
        ask(MARIE, {}, two),
      ]);
      expectOwnList(marieOnOne, MARIE);
      expectOwnList(moeOnTwo, MOE);
      expectOwnList(marieOnTwo, MARIE);
      expect(marieOnTwo.text).toBe(marieOnOne.text);
      // Marie's two misses collapse into one call; Moe's is his own.
      expect(streamCalls(MARIE)).toBe(1);
      expect(streamCalls(MOE)).toBe(1);
    } finally {
      await deletePrefix(one.inspector!, shared);
    }
  });
});

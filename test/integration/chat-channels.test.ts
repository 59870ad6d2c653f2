import request from 'supertest';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CredentialKind } from '../../simulators/chat/chat-simulator.js';
import {
  OWN_PRIVATE_CHANNEL,
  channelCacheCount,
  channelNames,
  channelsOf,
  keepSeededChannels,
  streamCallsBy,
  type ListedChannel,
} from '../helpers/channel-lists.js';
import type { TestGateway } from '../helpers/test-gateway.js';
import { useUpstreams } from '../helpers/upstreams.js';
import {
  createZulipOpenApiValidator,
  type ZulipOpenApiValidator,
} from '../helpers/zulip-openapi.js';

/*
 * GET /api/chat/channels (contract v4 section 2): the channels the caller may see, from Zulip's
 * GET /streams, in both chat modes; cached per user (section 4). What one user's entry must
 * never show another is test/integration/channel-leaks.test.ts.
 */

const upstreams = useUpstreams();
keepSeededChannels(upstreams);

let zulip: ZulipOpenApiValidator;
beforeAll(async () => {
  zulip = await createZulipOpenApiValidator();
});
afterEach(() => {
  // Every request the gateway sent, logins included, must be one the real server documents.
  for (const sent of upstreams.chat.requests) {
    expect(
      zulip.validateRequest({
        method: sent.method,
        path: sent.url,
        headers: sent.headers,
        ...(sent.body === '' ? {} : { body: sent.body }),
      }),
      `${sent.method} ${sent.url}`,
    ).toEqual([]);
  }
});

type Mode = 'session' | 'service';

interface Asker {
  gw: TestGateway;
  /** GET /api/chat/channels{query} as the caller (the session's cookie in session mode). */
  ask: (query?: string, headers?: Record<string, string>) => request.Test;
}

/**
 * A gateway on the shared test Redis and a caller on it: in session mode that user logged in,
 * in service mode the gateway's service account is that user.
 */
async function askerFor(
  mode: Mode,
  kind: CredentialKind,
  env: Record<string, string> = {},
): Promise<Asker> {
  const modeEnv = mode === 'session' ? upstreams.sessionEnv : upstreams.serviceEnv(kind);
  const gw = await upstreams.gateway({ cache: 'redis', env: { ...modeEnv, ...env } });
  const cookie = mode === 'session' ? await upstreams.login(gw, kind) : undefined;
  return {
    gw,
    ask: (query = '', headers = {}) =>
      request(gw.app)
        .get(`/api/chat/channels${query}`)
        // The identity representation: the ETag the tests compare is over the bytes they read.
        .set({ 'Accept-Encoding': 'identity', ...(cookie ? { Cookie: cookie } : {}), ...headers }),
  };
}

const streamCalls = () => upstreams.chat.requests.filter((r) => r.pathname === '/api/v1/streams');
const excludeArchivedSent = (i = 0) =>
  new URL(streamCalls()[i]!.url, 'http://chat').searchParams.get('exclude_archived');

/** What the member Marie sees (simulators/chat/chat-seed-channels.ts), in the contract's order. */
const MEMBER_VIEW: readonly ListedChannel[] = [
  { id: 3, name: 'announce', description: 'Company news', private: false },
  { id: 2, name: 'Design', description: 'Mock-ups & reviews', private: false },
  { id: 5, name: 'design-review', description: '', private: false },
  { id: 1, name: 'general', description: 'Everything **else**', private: false },
  { id: 7, name: 'marie-lab', description: 'Private notes of user 4', private: true },
  { id: 6, name: 'showcase', description: 'Open to the web', private: false },
  { id: 4, name: 'Zebra', description: '', private: false },
];

/** The service account answers everyone: only what every user may see. */
const viewIn = (mode: Mode, view: readonly ListedChannel[]) =>
  mode === 'session' ? view : view.filter((c) => !c.private);

describe.each(['session', 'service'] as const)('GET /api/chat/channels (%s mode)', (mode) => {
  it('when the member asks, then the answer is {channels: [{id, name, description, private}]} by lower-cased name, and nothing more', async () => {
    const { ask } = await askerFor(mode, 'member');
    const res = await ask();
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Object.keys(res.body as object)).toEqual(['channels']);
    for (const channel of channelsOf(res)) {
      expect(Object.keys(channel).sort()).toEqual(['description', 'id', 'name', 'private']);
    }
    expect(channelsOf(res)).toStrictEqual(viewIn(mode, MEMBER_VIEW));
    // One call, made with the member's own credentials in both modes (the service account is
    // the member here).
    expect(streamCalls()).toHaveLength(1);
    expect(streamCallsBy(upstreams, 'member')).toBe(1);
  });

  it('when names tie after lower-casing or differ outside ASCII, then the order is JavaScript string order of toLowerCase(), ties by id', async () => {
    const { control, realm } = upstreams.chat;
    control.addChannel({ name: 'Éclair' });
    control.addChannel({ name: 'Ab' });
    control.addChannel({ name: 'a_b' });
    const lower = control.addChannel({ name: 'beta' });
    const upper = control.addChannel({ name: 'beta-soon-Beta' });
    // Zulip (and the simulator's control) refuses a name another channel holds in any case;
    // the gateway must still order such a pair, so the realm is written directly. Zulip sends
    // "Beta" first (code points), the higher id: only the id tie-break puts "beta" first.
    realm.channels = realm.channels.map((c) => (c.id === upper.id ? { ...c, name: 'Beta' } : c));
    expect(upper.id).toBeGreaterThan(lower.id);

    const { ask } = await askerFor(mode, 'member');
    const res = await ask();
    expect(res.status).toBe(200);
    // "a_b" before "Ab": '_' sorts before 'b' once lower-cased (not when upper-cased);
    // "Éclair" after "Zebra": code units, not a locale's collation.
    expect(channelNames(res)).toEqual([
      'a_b',
      'Ab',
      'announce',
      'beta',
      'Beta',
      'Design',
      'design-review',
      'general',
      ...(mode === 'session' ? ['marie-lab'] : []),
      'showcase',
      'Zebra',
      'Éclair',
    ]);
    const ids = channelsOf(res).map((c) => c.id);
    expect(ids.indexOf(lower.id)).toBe(ids.indexOf(upper.id) - 1);
  });

  it('when include_archived is true, then archived channels are listed and the upstream got exclude_archived=false; without it they are not', async () => {
    // A second archived channel, archived by the test, besides the seeded legacy-support.
    upstreams.chat.control.updateChannel(4, { is_archived: true });
    const { ask } = await askerFor(mode, 'member');
    const without = await ask();
    expect(without.status).toBe(200);
    expect(channelNames(without)).not.toContain('legacy-support');
    expect(channelNames(without)).not.toContain('Zebra');
    expect(excludeArchivedSent(0)).not.toBe('false');

    const archived = await ask('?include_archived=true');
    expect(archived.status).toBe(200);
    expect(archived.headers['x-cache']).toBe('MISS');
    expect(channelNames(archived)).toEqual([
      'announce',
      'Design',
      'design-review',
      'general',
      'legacy-support',
      ...(mode === 'session' ? ['marie-lab'] : []),
      'showcase',
      'Zebra',
    ]);
    expect(channelsOf(archived).find((c) => c.name === 'legacy-support')).toStrictEqual({
      id: 8,
      name: 'legacy-support',
      description: 'Archived after the 2023 migration',
      private: false,
    });
    expect(streamCalls()).toHaveLength(2);
    expect(excludeArchivedSent(1)).toBe('false');

    // 1 is true as the contract's booleans go: the same entry.
    const one = await ask('?include_archived=1');
    expect(one.text).toBe(archived.text);
    expect(streamCalls()).toHaveLength(2);
  });

  it('when include_archived is maybe, then it is 400 VALIDATION_FAILED before any upstream call', async () => {
    const { ask } = await askerFor(mode, 'member');
    const before = upstreams.chat.requests.length; // a session-mode login calls the server
    const res = await ask('?include_archived=maybe');
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.body).toMatchObject({ code: 'VALIDATION_FAILED', source: 'gateway', status: 400 });
    expect((res.body as { detail: string }).detail).toContain(
      'include_archived must be true, false, 1 or 0',
    );
    expect(upstreams.chat.requests).toHaveLength(before);
  });

  it('when the answer is cached, then MISS then HIT, a strong ETag, private no-cache, and a 304 for If-None-Match', async () => {
    const { gw, ask } = await askerFor(mode, 'member');
    const miss = await ask();
    expect(miss.headers['x-cache']).toBe('MISS');
    expect(miss.headers['cache-control']).toBe('private, no-cache');
    const etag = miss.headers['etag'] as string;
    expect(etag).toMatch(/^"[^"]+"$/);
    await gw.loader.settled(); // the entry is written after the answer

    const hit = await ask();
    expect(hit.status).toBe(200);
    expect(hit.headers['x-cache']).toBe('HIT');
    expect(hit.headers['etag']).toBe(etag);
    expect(hit.headers['cache-control']).toBe('private, no-cache');
    expect(hit.text).toBe(miss.text);

    const revalidated = await ask('', { 'If-None-Match': etag });
    expect(revalidated.status).toBe(304);
    expect(revalidated.text).toBe('');
    expect(revalidated.headers['etag']).toBe(etag);
    expect(revalidated.headers['cache-control']).toBe('private, no-cache');
    expect(revalidated.headers['x-cache']).toBe('HIT');
    expect(streamCalls()).toHaveLength(1);
  });

  it('when answers are sent, then each matches the gateway’s own /openapi.json', async () => {
    const { gw, ask } = await askerFor(mode, 'member');
    const before = gw.openapi.checked;
    await ask().expect(200);
    await ask('?include_archived=true').expect(200);
    await ask('?include_archived=maybe').expect(400);
    expect(gw.openapi.checked - before).toBe(3);
    expect(gw.openapi.drift).toEqual([]);
    const document = await request(gw.app).get('/openapi.json').expect(200);
    const paths = (document.body as { paths: Record<string, unknown> }).paths;
    expect(paths['/api/chat/channels']).toHaveProperty('get');
  });

  it.each([
    ['answers 500', 502, 'UPSTREAM_ERROR', { kind: 'status', status: 500 } as const],
    ['answers 503', 502, 'UPSTREAM_ERROR', { kind: 'status', status: 503 } as const],
    ['is slower than the deadline', 504, 'UPSTREAM_TIMEOUT', { kind: 'delay', ms: 1500 } as const],
  ])(
    'when the chat server %s, then it is %s %s and nothing is cached',
    async (_name, status, code, fault) => {
      // Only the delay meets a short deadline (see chat-routes.test.ts, upstream faults).
      const { ask } = await askerFor(
        mode,
        'member',
        fault.kind === 'delay' ? { CHAT_TIMEOUT_MS: '400' } : {},
      );
      // Every call fails, a retry of the gateway's own included.
      upstreams.chat.faults.add({ fault, pathPrefix: '/api/v1/streams' });
      const res = await ask();
      expect(res.status).toBe(status);
      expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(res.body).toMatchObject({ code, source: 'chat', status });
      expect(res.headers['www-authenticate']).toBeUndefined();
      upstreams.chat.faults.clear();
      const next = await ask();
      expect(next.status).toBe(200);
      expect(next.headers['x-cache']).toBe('MISS');
    },
  );

  it('when a miss, a hit and a 304 are answered, then gateway_cache_requests_total{resource="channels"} counts them', async () => {
    const { gw, ask } = await askerFor(mode, 'member');
    const miss = await ask();
    await gw.loader.settled();
    await ask().expect(200);
    await ask('', { 'If-None-Match': miss.headers['etag'] as string }).expect(304);
    const text = (await request(gw.app).get('/metrics').expect(200)).text;
    expect(channelCacheCount(text, 'miss')).toBe(1);
    expect(channelCacheCount(text, 'hit')).toBe(2);
  });
});

describe('GET /api/chat/channels: who may ask', () => {
  it('when session mode has no session, then it is 401 before any upstream call', async () => {
    const gw = await upstreams.sessionGateway();
    const res = await request(gw.app).get('/api/chat/channels');
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'UNAUTHORIZED', source: 'gateway' });
    const forged = await request(gw.app)
      .get('/api/chat/channels?include_archived=true')
      .set('Cookie', 'bff_session=not-a-session');
    expect(forged.status).toBe(401);
    expect(upstreams.chat.requests).toHaveLength(0);
  });

  it('when the service account is an administrator with private channels, then the answer shows none of them', async () => {
    const grace = upstreams.chat.credentials('administrator').userId;
    upstreams.chat.control.addChannel({
      name: 'grace-secret',
      invite_only: true,
      subscribers: [grace],
    });
    // What the account itself sees: its own private channels and the shared Leadership.
    const direct = await fetch(`${upstreams.chat.apiBase}/streams`, {
      headers: { authorization: upstreams.chat.authHeader('administrator') },
    });
    const upstreamPrivate = (
      (await direct.json()) as { streams: { name: string; invite_only: boolean }[] }
    ).streams
      .filter((s) => s.invite_only)
      .map((s) => s.name)
      .sort();
    expect(upstreamPrivate).toEqual(
      ['Leadership', OWN_PRIVATE_CHANNEL.administrator, 'grace-secret'].sort(),
    );
    upstreams.chat.requests.length = 0;

    const { ask } = await askerFor('service', 'administrator');
    for (const query of ['', '?include_archived=true']) {
      const res = await ask(query);
      expect(res.status).toBe(200);
      expect(channelsOf(res).filter((c) => c.private)).toEqual([]);
      for (const name of upstreamPrivate) expect(res.text).not.toContain(name);
    }
  });

  it('when the administrator logs in (session mode), then her own private channels are listed as private', async () => {
    const { ask } = await askerFor('session', 'administrator');
    const res = await ask();
    expect(res.status).toBe(200);
    expect(
      channelsOf(res)
        .filter((c) => c.private)
        .map((c) => c.name),
    ).toEqual([OWN_PRIVATE_CHANNEL.administrator, 'Leadership']);
  });
});

import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createChatSimulator, type ChatSimulator } from '../../simulators/chat/chat-simulator.js';
import {
  createSearchSimulator,
  type SearchSimulator,
} from '../../simulators/search/search-simulator.js';
import { eventually } from '../helpers/eventually.js';
import { SEARCH_TOKEN, createTestGateway, type TestGateway } from '../helpers/test-gateway.js';
import { createZulipOpenApiValidator } from '../helpers/zulip-openapi.js';

/*
 * Contract section 6, Chat events: the gateway keeps the cached channel folders fresh from the
 * chat simulator's event queue (POST /register, GET /events, DELETE /events), one queue per
 * deployment (a lease in the real Redis), with the service account.
 */

let chat: ChatSimulator;
let search: SearchSimulator;
const gateways: TestGateway[] = [];

beforeAll(async () => {
  chat = createChatSimulator({ heartbeatMs: 1000 });
  search = createSearchSimulator({ clientToken: SEARCH_TOKEN });
  await Promise.all([chat.listen(), search.listen()]);
});
afterAll(async () => {
  await Promise.all([chat.close(), search.close()]);
});
beforeEach(() => {
  chat.requests.length = 0;
  chat.faults.clear();
});
afterEach(async () => {
  await Promise.all(gateways.splice(0).map((gw) => gw.close()));
  chat.control.loseEventQueues();
});

async function gateway(env: Record<string, string> = {}, cache?: 'redis') {
  const admin = chat.credentials('administrator');
  const gw = await createTestGateway({
    searchOrigin: search.origin,
    chatOrigin: chat.origin,
    ...(cache ? { cache } : {}),
    env: {
      CHAT_AUTH_MODE: 'service',
      CHAT_EMAIL: admin.email,
      CHAT_API_KEY: admin.apiKey,
      CHAT_EVENTS: 'on',
      // Long enough that only the events can make an answer change during a test.
      CHANNEL_FOLDERS_CACHE_TTL_SECONDS: '3600',
      ...env,
    },
  });
  gateways.push(gw);
  return gw;
}

const registrations = () =>
  chat.requests.filter((r) => r.pathname === '/api/v1/register' && r.method === 'POST');
const polls = () =>
  chat.requests.filter((r) => r.pathname === '/api/v1/events' && r.method === 'GET');

const folderNames = async (gw: TestGateway, archived = false) => {
  const res = await request(gw.app).get(`/api/chat/channel-folders?include_archived=${archived}`);
  expect(res.status).toBe(200);
  return (res.body as { channel_folders: { name: string }[] }).channel_folders.map((f) => f.name);
};

/**
 * Waits until an answer holds. The gateway applies events out of sight; what it does next is
 * seen by the chat server (a refresh, the next poll), so the check runs on each request the
 * simulator receives, with a back-off for the rest.
 */
const until = (check: () => Promise<boolean>, what: string, timeoutMs?: number) =>
  eventually(check, {
    what,
    on: [[chat.server, 'request']],
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  });

describe('the chat event queue', () => {
  it('when CHAT_EVENTS is on, then the service account registers one queue for channel folder events, by the OpenAPI', async () => {
    await gateway();
    const registered = await chat.received((r) => r.pathname === '/api/v1/register');
    const form = new URLSearchParams(registered.body);
    expect(JSON.parse(form.get('event_types')!)).toEqual(['channel_folder']);
    expect(JSON.parse(form.get('fetch_event_types')!)).toEqual(['channel_folders']);
    expect(registered.headers['authorization']).toBe(chat.authHeader('administrator'));
    await chat.received((r) => r.pathname === '/api/v1/events');
    const validator = await createZulipOpenApiValidator();
    for (const sent of [...registrations(), ...polls()]) {
      expect(
        validator.validateRequest({
          method: sent.method,
          path: sent.url,
          headers: sent.headers,
          ...(sent.body ? { body: sent.body } : {}),
        }),
      ).toEqual([]);
    }
    expect(chat.events.count()).toBe(1);
  });

  it('when the queue is registered, then its snapshot fills both folder lists without a folder call', async () => {
    const gw = await gateway();
    await chat.received((r) => r.pathname === '/api/v1/events');
    const res = await request(gw.app).get('/api/chat/channel-folders');
    expect(res.headers['x-cache']).toBe('HIT');
    const archived = await request(gw.app).get('/api/chat/channel-folders?include_archived=true');
    expect(archived.headers['x-cache']).toBe('HIT');
    expect(chat.requests.filter((r) => r.pathname === '/api/v1/channel_folders')).toEqual([]);
    // The same bytes as the folder endpoint's own answer would give.
    const direct = await fetch(`${chat.apiBase}/channel_folders?include_archived=true`, {
      headers: { authorization: chat.authHeader('administrator') },
    });
    const upstream = (await direct.json()) as { channel_folders: { id: number }[] };
    expect((archived.body as typeof upstream).channel_folders.map((f) => f.id)).toEqual(
      upstream.channel_folders.map((f) => f.id),
    );
  });

  it('when a folder is renamed, archived or reordered on the chat server, then the cached answers change', async () => {
    const gw = await gateway();
    await chat.received((r) => r.pathname === '/api/v1/events');
    const [first, second] = sortedFolders();
    chat.control.updateChannelFolder(first!.id, { name: 'Renamed live' });
    await until(async () => (await folderNames(gw)).includes('Renamed live'), 'the rename');
    chat.control.updateChannelFolder(second!.id, { is_archived: true });
    await until(async () => !(await folderNames(gw)).includes(second!.name), 'the archiving');
    expect(await folderNames(gw, true)).toContain(second!.name);
    const before = await folderNames(gw);
    chat.control.reorderChannelFolders(
      sortedFolders()
        .map((f) => f.id)
        .reverse(),
    );
    await until(
      async () => (await folderNames(gw)).join() === [...before].reverse().join(),
      'the reorder',
    );
  });

  it('when the chat server loses the queue, then the gateway registers a new one and takes its snapshot as the truth', async () => {
    const gw = await gateway();
    await chat.received((r) => r.pathname === '/api/v1/events');
    // Lost, and changed while no queue exists: only the new snapshot can carry the change.
    const [first] = sortedFolders();
    chat.control.loseEventQueues();
    chat.control.updateChannelFolder(first!.id, { name: 'Changed while lost' });
    await until(async () => (await folderNames(gw)).includes('Changed while lost'), 'the snapshot');
    expect(registrations()).toHaveLength(2);
    // The server's documented answer to a lost queue is the gateway's input refused, not its fault.
    const metrics = (await request(gw.app).get('/metrics')).text;
    expect(metrics).toMatch(
      /gateway_upstream_request_duration_seconds_count\{upstream="chat",operation="events",outcome="client_error"\} [1-9]/,
    );
    expect(metrics).not.toMatch(/operation="events",outcome="local_error"/);
  });

  it('when registering is rate limited, then the gateway backs off and registers after it', async () => {
    chat.rateLimitNext(1);
    const gw = await gateway();
    await chat.received((r) => r.pathname === '/api/v1/events');
    expect(registrations()).toHaveLength(2);
    const lines = gw.logs.lines().filter((l) => l['msg'] === 'chat events failed; backing off');
    expect(lines).toHaveLength(1);
    // Retry-After: 1 from the server, and the back-off never shorter than it.
    expect(lines[0]!['waitMs']).toBeGreaterThanOrEqual(1000);
  });

  it('when the gateway stops, then it deletes its queue on the chat server', async () => {
    const gw = await gateway();
    await chat.received((r) => r.pathname === '/api/v1/events');
    expect(chat.events.count()).toBe(1);
    gateways.splice(gateways.indexOf(gw), 1);
    await gw.close();
    expect(
      chat.requests.some((r) => r.pathname === '/api/v1/events' && r.method === 'DELETE'),
    ).toBe(true);
    expect(chat.events.count()).toBe(0);
  });

  it('when CHAT_EVENTS is off, then nothing is registered', async () => {
    const gw = await gateway({ CHAT_EVENTS: 'off' });
    await request(gw.app).get('/api/chat/channel-folders').expect(200);
    expect(registrations()).toEqual([]);
  });

  it('when the queue runs, then /readyz and /metrics show it', async () => {
    const gw = await gateway();
    await chat.received((r) => r.pathname === '/api/v1/events');
    await until(async () => {
      const res = await request(gw.app).get('/readyz');
      return (
        (res.body as { checks: Record<string, { state?: string }> }).checks['chat-events']
          ?.state === 'polling'
      );
    }, 'the polling state');
    const metrics = await request(gw.app).get('/metrics');
    expect(metrics.text).toContain('gateway_chat_events_queue_state{state="polling"} 1');
    expect(metrics.text).toContain('gateway_chat_events_registrations_total 1');
  });
});

describe('one queue per deployment', () => {
  it('when two instances share Redis, then one holds the queue and a change reaches both', async () => {
    const prefix = `events:${randomUUID()}:`;
    const a = await gateway({ REDIS_KEY_PREFIX: prefix }, 'redis');
    const b = await gateway({ REDIS_KEY_PREFIX: prefix }, 'redis');
    await chat.received((r) => r.pathname === '/api/v1/events');
    expect(registrations()).toHaveLength(1);
    expect(chat.events.count()).toBe(1);
    const [first] = sortedFolders();
    chat.control.updateChannelFolder(first!.id, { name: 'Seen by both' });
    await until(async () => (await folderNames(a)).includes('Seen by both'), 'instance a');
    await until(async () => (await folderNames(b)).includes('Seen by both'), 'instance b');
  });

  it('when the holder stops, then the other instance takes the lease over and registers its own queue', async () => {
    const prefix = `events:${randomUUID()}:`;
    const one = await gateway({ REDIS_KEY_PREFIX: prefix }, 'redis');
    const two = await gateway({ REDIS_KEY_PREFIX: prefix }, 'redis');
    await chat.received((r) => r.pathname === '/api/v1/events');
    const stateOf = async (gw: TestGateway) =>
      ((await request(gw.app).get('/readyz')).body as { checks: Record<string, { state: string }> })
        .checks['chat-events']?.state;
    await until(
      async () => (await stateOf(one)) === 'polling' || (await stateOf(two)) === 'polling',
      'a holder',
    );
    const [a, b] = (await stateOf(one)) === 'polling' ? [one, two] : [two, one];
    // The other is 'off' until its first try for the lease has come back from Redis.
    await until(async () => (await stateOf(b)) === 'standby', 'the other on standby');
    expect(await stateOf(a)).toBe('polling');
    gateways.splice(gateways.indexOf(a), 1);
    await a.close();
    await until(() => Promise.resolve(registrations().length === 2), 'the takeover', 15_000);
    const [first] = sortedFolders();
    chat.control.updateChannelFolder(first!.id, { name: 'After takeover' });
    await until(async () => (await folderNames(b)).includes('After takeover'), 'instance b');
  }, 30_000);
});

function sortedFolders() {
  return [...chat.realm.channelFolders]
    .filter((f) => !f.isArchived)
    .sort((x, y) => x.order - y.order || x.id - y.id);
}

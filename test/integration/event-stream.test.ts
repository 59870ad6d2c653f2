import { once } from 'node:events';
import { connect } from 'node:net';
import request from 'supertest';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createChatSimulator, type ChatSimulator } from '../../simulators/chat/chat-simulator.js';
import {
  createSearchSimulator,
  type SearchSimulator,
} from '../../simulators/search/search-simulator.js';
import { openEventStream, type EventStreamClient } from '../helpers/event-stream-client.js';
import {
  BROWSER_HEADERS,
  SEARCH_TOKEN,
  createTestGateway,
  type TestGateway,
  type TestGatewayOptions,
} from '../helpers/test-gateway.js';
import { TEST_REDIS_URL, uniquePrefix } from '../helpers/test-redis.js';
import { startHoldProxy } from '../harness/hold-proxy.js';

/*
 * Contract section 2.2, GET /api/events, on real listeners: the chat simulator's event queue
 * brings folder changes, and every open stream gets the folder route's bytes.
 */

let chat: ChatSimulator;
let search: SearchSimulator;
const gateways: TestGateway[] = [];
const streams: EventStreamClient[] = [];

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
  for (const stream of streams.splice(0)) stream.close();
  await Promise.all(gateways.splice(0).map((gw) => gw.close()));
  chat.control.loseEventQueues();
});

async function gateway(
  env: Record<string, string> = {},
  cache?: TestGatewayOptions['cache'],
): Promise<TestGateway> {
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
      CHANNEL_FOLDERS_CACHE_TTL_SECONDS: '3600',
      ...env,
    },
  });
  gateways.push(gw);
  return gw;
}

async function stream(gw: TestGateway, path = '/api/events', headers: Record<string, string> = {}) {
  const opened = await openEventStream(`${gw.gateway.url}${path}`, headers);
  streams.push(opened);
  return opened;
}

/** The folder route's answer now: its identity bytes and version (the ETag without quotes). */
async function folderRoute(gw: TestGateway, archived = false) {
  const res = await request(gw.app)
    .get(`/api/chat/channel-folders?include_archived=${archived}`)
    .set('Accept-Encoding', 'identity');
  expect(res.status).toBe(200);
  return { body: res.text, version: (res.headers['etag'] as string).replaceAll('"', '') };
}

function firstFolder() {
  return [...chat.realm.channelFolders]
    .filter((f) => !f.isArchived)
    .sort((x, y) => x.order - y.order || x.id - y.id)[0]!;
}

const folders = (event: { data?: string }) =>
  (JSON.parse(event.data ?? '{}') as { channel_folders: { name: string }[] }).channel_folders;

describe('GET /api/events', () => {
  it('when a page opens the stream, then retry comes first, then the current list as the folder route answers it, never compressed', async () => {
    const gw = await gateway();
    await chat.received((r) => r.pathname === '/api/v1/events');
    const events = await stream(gw, '/api/events', { 'Accept-Encoding': 'gzip, br' });
    expect(events.status).toBe(200);
    expect(events.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(events.headers['cache-control']).toBe('no-store');
    expect(events.headers['content-encoding']).toBeUndefined();
    expect(events.headers['x-accel-buffering']).toBe('no');
    const first = await events.next((e) => e.event === 'channel_folders');
    expect(events.raw.startsWith('retry: ')).toBe(true);
    expect(events.events[0]!.retry).toBeGreaterThanOrEqual(1000);
    expect(events.events[0]!.retry).toBeLessThanOrEqual(30000);
    const route = await folderRoute(gw);
    expect(first.id).toBe(route.version);
    expect(first.data).toBe(route.body);
  });

  it('when a folder is renamed on the chat server, then the open stream gets the new list, the same bytes and version as the folder route', async () => {
    const gw = await gateway();
    await chat.received((r) => r.pathname === '/api/v1/events');
    const events = await stream(gw);
    const before = await events.next((e) => e.event === 'channel_folders');
    chat.control.updateChannelFolder(firstFolder().id, { name: 'Renamed on the server' });
    const after = await events.next((e) => e.event === 'channel_folders' && e.id !== before.id);
    expect(folders(after).map((f) => f.name)).toContain('Renamed on the server');
    const route = await folderRoute(gw);
    expect(after.id).toBe(route.version);
    expect(after.data).toBe(route.body);
  });

  it('when Last-Event-ID names the current version, then no list is sent until it changes; include_archived follows its own list', async () => {
    const gw = await gateway();
    await chat.received((r) => r.pathname === '/api/v1/events');
    const archived = await folderRoute(gw, true);
    const events = await stream(gw, '/api/events?include_archived=true', {
      'Last-Event-ID': archived.version,
    });
    // A second stream without the header proves the first had its chance to send.
    const other = await stream(gw, '/api/events?include_archived=true');
    await other.next((e) => e.event === 'channel_folders');
    expect(events.events.filter((e) => e.event === 'channel_folders')).toEqual([]);
    chat.control.updateChannelFolder(firstFolder().id, { is_archived: true });
    const changed = await events.next((e) => e.event === 'channel_folders');
    expect(changed.data).toBe((await folderRoute(gw, true)).body);
  });

  it('when the instance holds EVENTS_MAX_STREAMS, then a new stream is 503 problem+json with Retry-After and the open one keeps working', async () => {
    const gw = await gateway({ EVENTS_MAX_STREAMS: '1' });
    const open = await stream(gw);
    await open.next((e) => e.event === 'channel_folders');
    const refused = await stream(gw);
    await refused.ended;
    expect(refused.status).toBe(503);
    expect(refused.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(refused.body)).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect((await request(gw.app).get('/metrics')).text).toMatch(
      /^gateway_event_streams_refused_total\{reason="full"\} 1$/m,
    );
  });

  it('when two streams open at once against a cap of one, then exactly one opens and the other is 503', async () => {
    // Both pass the stage's first look at the cap; Redis's answers to their rate-limit counts
    // are held until both have asked, so both are between that look and their opening at once.
    const { hostname, port } = new URL(TEST_REDIS_URL);
    const redis = await startHoldProxy({ host: hostname, port: Number(port) });
    try {
      const gw = await gateway(
        { EVENTS_MAX_STREAMS: '1' },
        { redisUrl: `redis://${redis.host}:${redis.port}` },
      );
      const counted = () => redis.count(/ratelimit:client:/);
      const before = counted();
      redis.hold();
      const opening = [stream(gw), stream(gw)];
      await redis.until(() => counted() >= before + 2);
      redis.release();
      const both = await Promise.all(opening);
      await Promise.all(both.map((s) => (s.status === 200 ? s.next(() => true) : s.ended)));
      expect(both.map((s) => s.status).sort()).toEqual([200, 503]);
    } finally {
      redis.release();
      for (const s of streams.splice(0)) s.close();
      await Promise.all(gateways.splice(0).map((gw) => gw.close()));
      await redis.close();
    }
  });

  it('when a client opens streams, then each counts once against its rate limit and the one past it is 429 problem+json', async () => {
    // Streams open in front of the app (events-stage.ts); a refused one is answered by the
    // route, which must take the stage's count rather than count the request again.
    const gw = await gateway({ RATE_LIMIT_PER_CLIENT: '2' });
    const first = await stream(gw);
    const second = await stream(gw);
    await Promise.all([first, second].map((s) => s.next((e) => e.event === 'channel_folders')));
    expect(first.headers['ratelimit']).toMatch(/;r=1;/);
    expect(second.headers['ratelimit']).toMatch(/;r=0;/);
    const refused = await stream(gw);
    await refused.ended;
    expect(refused.status).toBe(429);
    expect(refused.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(JSON.parse(refused.body)).toMatchObject({ code: 'RATE_LIMITED' });
    expect(refused.headers['ratelimit']).toMatch(/;r=0;/);
  });

  it('when the gateway stops without a drain delay, then every stream ends at once and the stop is clean', async () => {
    const gw = await gateway();
    const open = [await stream(gw), await stream(gw), await stream(gw)];
    await Promise.all(open.map((s) => s.next((e) => e.event === 'channel_folders')));
    const stopped = gw.gateway.stop();
    await Promise.all(open.map((s) => s.ended));
    expect(await stopped).toBe(true);
    gateways.splice(gateways.indexOf(gw), 1);
    await gw.close().catch(() => undefined);
  });

  it('when the gateway stops with a drain delay, then the streams end spread over it, each at its own moment, all before the listener closes, and the stop is clean', async () => {
    const gw = await gateway({ SHUTDOWN_DRAIN_DELAY_MS: '2000' });
    const open = await Promise.all(Array.from({ length: 20 }, () => stream(gw)));
    await Promise.all(open.map((s) => s.next((e) => e.event === 'channel_folders')));
    // Order, not speed: a tick counts the event loop's timer turns while the stop runs; each
    // end is stamped with the turn it arrived in, and the log keeps what happened in order.
    let turn = 0;
    const ticker = setInterval(() => (turn += 1), 1);
    const log: string[] = [];
    const endTurns: number[] = [];
    for (const s of open) {
      void s.ended.then(() => {
        endTurns.push(turn);
        log.push('stream ended');
      });
    }
    gw.gateway.server.once('close', () => log.push('listener closed'));
    try {
      const clean = await gw.gateway.stop();
      log.push('stopped');
      expect(clean).toBe(true);
    } finally {
      clearInterval(ticker);
    }
    gateways.splice(gateways.indexOf(gw), 1);
    expect(endTurns).toHaveLength(20);
    // Spread, not all in one instant (they would share one or two turns).
    expect(new Set(endTurns).size).toBeGreaterThanOrEqual(5);
    // None after the drain: every end came before the listener closed and the stop resolved.
    expect(log.lastIndexOf('stream ended')).toBeLessThan(log.indexOf('listener closed'));
    expect(log.at(-1)).toBe('stopped');
    expect((await request(gw.app).get('/metrics')).text).toMatch(
      /^gateway_event_streams_closed_total\{reason="shutdown"\} 20$/m,
    );
  });

  it('when a stop has begun, then a new stream is 503 with Retry-After and counted as refused for draining, while the open one ends within the drain', async () => {
    const gw = await gateway({ SHUTDOWN_DRAIN_DELAY_MS: '2000' });
    const open = await stream(gw);
    await open.next((e) => e.event === 'channel_folders');
    // Connected before the stop, so the listener's closing cannot race the request.
    const { hostname, port } = new URL(gw.gateway.url);
    const socket = connect(Number(port), hostname);
    await once(socket, 'connect');
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    const stopped = gw.gateway.stop();
    socket.write(`GET /api/events HTTP/1.1\r\nHost: ${hostname}:${port}\r\n\r\n`);
    await once(socket, 'close');
    await open.ended;
    expect(await stopped).toBe(true);
    gateways.splice(gateways.indexOf(gw), 1);
    expect(answer).toMatch(/^HTTP\/1\.1 503 /);
    expect(answer).toMatch(/\r\nretry-after: \d+\r\n/i);
    expect((await request(gw.app).get('/metrics')).text).toMatch(
      /^gateway_event_streams_refused_total\{reason="draining"\} 1$/m,
    );
  });

  it('when streams open, change and close, then the metrics count them', async () => {
    const gw = await gateway();
    const events = await stream(gw);
    await events.next((e) => e.event === 'channel_folders');
    const open = await request(gw.app).get('/metrics');
    expect(open.text).toMatch(/^gateway_event_streams 1$/m);
    expect(open.text).toMatch(/^gateway_events_sent_total\{event="channel_folders"\} 1$/m);
    events.close();
    await events.ended;
    await waitForMetric(gw, /^gateway_event_streams_closed_total\{reason="client"\} 1$/m);
    expect((await request(gw.app).get('/metrics')).text).toMatch(/^gateway_event_streams 0$/m);
  });

  it('when two instances share Redis, then a change seen by the lease holder reaches a stream on the other instance', async () => {
    const prefix = uniquePrefix();
    const holder = await gateway({ REDIS_KEY_PREFIX: prefix }, 'redis');
    await chat.received((r) => r.pathname === '/api/v1/events');
    const other = await gateway({ REDIS_KEY_PREFIX: prefix, CHAT_EVENTS: 'off' }, 'redis');
    const events = await stream(other);
    const before = await events.next((e) => e.event === 'channel_folders');
    chat.control.updateChannelFolder(firstFolder().id, { name: 'Seen across the fleet' });
    const after = await events.next((e) => e.event === 'channel_folders' && e.id !== before.id);
    expect(folders(after).map((f) => f.name)).toContain('Seen across the fleet');
    expect(after.data).toBe((await folderRoute(holder)).body);
  });
});

describe('GET /api/events in session mode', () => {
  async function sessionGateway(prefix: string) {
    return gateway(
      {
        CHAT_AUTH_MODE: 'session',
        SESSION_COOKIE_SECURE: 'false',
        REDIS_KEY_PREFIX: prefix,
      },
      'redis',
    );
  }

  async function login(gw: TestGateway) {
    const { email, password } = chat.credentials('member');
    const res = await request(gw.app)
      .post('/api/auth/login')
      .set(BROWSER_HEADERS)
      .send({ email, password });
    expect(res.status).toBe(200);
    return (res.headers['set-cookie'] as unknown as string[])[0]!.split(';')[0]!;
  }

  it('when nobody is logged in, then the stream is 401 problem+json before any stream byte', async () => {
    const gw = await sessionGateway(uniquePrefix());
    const refused = await stream(gw);
    await refused.ended;
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.body)).toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it('when the session is logged out on the other instance, then the stream ends', async () => {
    const prefix = uniquePrefix();
    const a = await sessionGateway(prefix);
    const b = await sessionGateway(prefix);
    const cookie = await login(a);
    const events = await stream(a, '/api/events', { Cookie: cookie });
    await events.next((e) => e.event === 'channel_folders');
    const out = await request(b.app)
      .post('/api/auth/logout')
      .set(BROWSER_HEADERS)
      .set('Cookie', cookie);
    expect(out.status).toBe(204);
    await events.ended;
    await waitForMetric(a, /^gateway_event_streams_closed_total\{reason="session"\} 1$/m);
  });
});

async function waitForMetric(gw: TestGateway, pattern: RegExp): Promise<void> {
  for (let i = 0; i < 100; i += 1) {
    if (pattern.test((await request(gw.app).get('/metrics')).text)) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no metric ${pattern}`);
}

import { connect } from 'node:net';
import request from 'supertest';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createChatSimulator, type ChatSimulator } from '../../simulators/chat/chat-simulator.js';
import {
  createSearchSimulator,
  type SearchSimulator,
} from '../../simulators/search/search-simulator.js';
import { eventually } from '../helpers/eventually.js';
import { openEventStream, type EventStreamClient } from '../helpers/event-stream-client.js';
import {
  BROWSER_HEADERS,
  SEARCH_TOKEN,
  createTestGateway,
  type TestGateway,
} from '../helpers/test-gateway.js';

/*
 * Contract section 2.2 (bounds) and section 7 (quotas per caller), v4: one caller cannot hold
 * every event-stream slot of an instance (EVENTS_MAX_STREAMS_PER_CLIENT), and HEAD /api/events
 * is answered at once and holds no slot. On the gateway's real listener.
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
afterEach(async () => {
  for (const stream of streams.splice(0)) stream.close();
  await Promise.all(gateways.splice(0).map((gw) => gw.close()));
});

async function gateway(env: Record<string, string>): Promise<TestGateway> {
  const gw = await createTestGateway({
    searchOrigin: search.origin,
    chatOrigin: chat.origin,
    env: { EVENTS_MAX_STREAMS_PER_CLIENT: '2', ...env },
  });
  gateways.push(gw);
  return gw;
}

function serviceGateway(env: Record<string, string> = {}): Promise<TestGateway> {
  const admin = chat.credentials('administrator');
  return gateway({
    CHAT_AUTH_MODE: 'service',
    CHAT_EMAIL: admin.email,
    CHAT_API_KEY: admin.apiKey,
    ...env,
  });
}

/** A stream that opened (its first event came) or was refused (its answer is complete). */
async function stream(gw: TestGateway, headers: Record<string, string> = {}) {
  const opened = await openEventStream(`${gw.gateway.url}/api/events`, headers);
  streams.push(opened);
  if (opened.status === 200) await opened.next((e) => e.event === 'channel_folders');
  else await opened.ended;
  return opened;
}

function expectTooMany(refused: EventStreamClient): void {
  expect(refused.status).toBe(429);
  expect(refused.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  expect(JSON.parse(refused.body)).toMatchObject({ code: 'TOO_MANY_STREAMS', status: 429 });
}

async function metrics(gw: TestGateway): Promise<string> {
  return (await request(gw.app).get('/metrics')).text;
}

/** Waits until the gateway holds `open` streams (a closed client's stream ends on its side). */
async function untilOpen(gw: TestGateway, open: number): Promise<void> {
  const line = new RegExp(`^gateway_event_streams ${open}$`, 'm');
  await eventually(async () => line.test(await metrics(gw)), {
    what: `the gateway holding ${open} streams`,
  });
}

describe('EVENTS_MAX_STREAMS_PER_CLIENT in session mode', () => {
  async function login(gw: TestGateway, kind: 'member' | 'administrator') {
    const { email, password } = chat.credentials(kind);
    const res = await request(gw.app)
      .post('/api/auth/login')
      .set(BROWSER_HEADERS)
      .send({ email, password });
    expect(res.status).toBe(200);
    return { Cookie: (res.headers['set-cookie'] as unknown as string[])[0]!.split(';')[0]! };
  }

  it('when one user opens ten streams at once, then exactly the quota opens and the rest are 429', async () => {
    const gw = await gateway({
      CHAT_AUTH_MODE: 'session',
      SESSION_COOKIE_SECURE: 'false',
      RATE_LIMIT_PER_SESSION: '1000',
    });
    const cookie = await login(gw, 'member');
    const all = await Promise.all(Array.from({ length: 10 }, () => stream(gw, cookie)));
    const opened = all.filter((s) => s.status === 200);
    expect(opened).toHaveLength(2);
    for (const refused of all.filter((s) => s.status !== 200)) expectTooMany(refused);
    await untilOpen(gw, 2);
  });

  it("when a user holds the quota across two sessions, then the next stream is 429 TOO_MANY_STREAMS with Retry-After, another user still opens streams, and closing one of the user's streams lets them open again", async () => {
    const gw = await gateway({ CHAT_AUTH_MODE: 'session', SESSION_COOKIE_SECURE: 'false' });
    const [tab, otherDevice, other] = [
      await login(gw, 'member'),
      await login(gw, 'member'),
      await login(gw, 'administrator'),
    ];
    const first = await stream(gw, tab);
    const second = await stream(gw, otherDevice);
    expect([first.status, second.status]).toEqual([200, 200]);

    // The user's sessions count together: the quota is the user's, not a session's.
    expectTooMany(await stream(gw, tab));
    expectTooMany(await stream(gw, otherDevice));
    // Only that user is held back.
    expect((await stream(gw, other)).status).toBe(200);
    expect((await stream(gw, other)).status).toBe(200);

    first.close();
    await untilOpen(gw, 3);
    expect((await stream(gw, tab)).status).toBe(200);
    expectTooMany(await stream(gw, otherDevice));

    const text = await metrics(gw);
    expect(text).toMatch(/^gateway_event_streams_refused_total\{reason="per_client"\} 3$/m);
    expect(text).toMatch(/^gateway_event_streams_refused_total\{reason="full"\} 0$/m);
  });

  it("when the user's streams end for any reason, then the quota is given back: streams ended by a logout, then by their clients", async () => {
    const gw = await gateway({ CHAT_AUTH_MODE: 'session', SESSION_COOKIE_SECURE: 'false' });
    const gone = await login(gw, 'member');
    await stream(gw, gone);
    await stream(gw, gone);
    const out = await request(gw.app).post('/api/auth/logout').set(BROWSER_HEADERS).set(gone);
    expect(out.status).toBe(204);
    await untilOpen(gw, 0);
    // Ended by the session check (reason "session"): the user's count went with them.
    const again = await login(gw, 'member');
    for (let round = 0; round < 3; round += 1) {
      const opened = [await stream(gw, again), await stream(gw, again)];
      expect(opened.map((s) => s.status)).toEqual([200, 200]);
      for (const s of opened) s.close();
      await untilOpen(gw, 0);
    }
  });
});

describe('EVENTS_MAX_STREAMS_PER_CLIENT in service mode', () => {
  it('when a trusted proxy names two clients, then each has its own quota, as the rate limits count addresses', async () => {
    const gw = await serviceGateway({ TRUST_PROXY: '1' });
    const a = { 'X-Forwarded-For': '198.51.100.7' };
    const b = { 'X-Forwarded-For': '198.51.100.8' };
    expect((await stream(gw, a)).status).toBe(200);
    expect((await stream(gw, a)).status).toBe(200);
    expectTooMany(await stream(gw, a));
    expect((await stream(gw, b)).status).toBe(200);
    expect((await stream(gw, b)).status).toBe(200);
    expectTooMany(await stream(gw, b));
    expect(await metrics(gw)).toMatch(
      /^gateway_event_streams_refused_total\{reason="per_client"\} 2$/m,
    );
  });

  it('when no proxy is trusted, then clients cannot be told apart and no per-client quota applies', async () => {
    // Every page behind the one proxy would share its address, and so one quota.
    const gw = await serviceGateway();
    const opened = [await stream(gw), await stream(gw), await stream(gw)];
    expect(opened.map((s) => s.status)).toEqual([200, 200, 200]);
  });

  it('when a client at its quota asks HEAD /api/events, then the route answers as a GET would be: 429 TOO_MANY_STREAMS', async () => {
    // HEAD passes the events stage and reaches the app's route: the route holds the quota too.
    const gw = await serviceGateway({ TRUST_PROXY: '1' });
    const a = { 'X-Forwarded-For': '198.51.100.7' };
    await stream(gw, a);
    await stream(gw, a);
    const head = await request(gw.app).head('/api/events').set(a);
    expect(head.status).toBe(429);
    expect(head.headers['retry-after']).toBeDefined();
  });
});

describe('HEAD /api/events', () => {
  it('when a client sends HEAD, then the status line and the stream head come at once with no body, and no slot is held', async () => {
    const gw = await serviceGateway({ EVENTS_MAX_STREAMS: '1' });
    const { hostname, port } = new URL(gw.gateway.url);
    const socket = connect(Number(port), hostname);
    try {
      let received = '';
      const head = new Promise<string>((resolve, reject) => {
        socket.setEncoding('utf8');
        socket.on('data', (chunk: string) => {
          received += chunk;
          if (received.includes('\r\n\r\n')) resolve(received);
        });
        socket.on('error', reject);
        socket.on('close', () => reject(new Error(`closed; got ${JSON.stringify(received)}`)));
      });
      // Keep-alive: the connection stays open after the answer, so a slot held would show.
      socket.write(`HEAD /api/events HTTP/1.1\r\nHost: ${hostname}:${port}\r\n\r\n`);
      const answer = await head;
      expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      expect(answer.toLowerCase()).toContain('content-type: text/event-stream');
      expect(answer.split('\r\n\r\n')[1]).toBe('');
      expect(await metrics(gw)).toMatch(/^gateway_event_streams 0$/m);
      // The one slot is free: a stream opens beside the HEAD's open connection.
      expect((await stream(gw)).status).toBe(200);
    } finally {
      socket.destroy();
    }
  });
});

import request from 'supertest';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createChatSimulator, type ChatSimulator } from '../../simulators/chat/chat-simulator.js';
import {
  createSearchSimulator,
  type SearchSimulator,
} from '../../simulators/search/search-simulator.js';
import {
  APP_ORIGIN,
  SEARCH_TOKEN,
  createTestGateway,
  type TestGateway,
} from '../helpers/test-gateway.js';

let chat: ChatSimulator;
let search: SearchSimulator;
let gw: TestGateway;

beforeAll(async () => {
  chat = createChatSimulator();
  search = createSearchSimulator({ clientToken: SEARCH_TOKEN });
  await Promise.all([chat.listen(), search.listen()]);
});
afterAll(() => Promise.all([chat.close(), search.close()]));
beforeEach(async () => {
  chat.requests.length = 0;
  const { email, apiKey } = chat.credentials('administrator');
  gw = await createTestGateway({
    searchOrigin: search.origin,
    chatOrigin: chat.origin,
    env: { CHAT_AUTH_MODE: 'service', CHAT_EMAIL: email, CHAT_API_KEY: apiKey },
  });
});
afterEach(() => gw.close());

const statusUpdate = () =>
  request(gw.app).post('/api/chat/users/4/status').send({ status_text: 'x' });

describe('cross-site request forgery', () => {
  it.each([
    ['no X-CSRF header', { Origin: APP_ORIGIN }],
    ['X-CSRF: 0', { Origin: APP_ORIGIN, 'X-CSRF': '0' }],
    ['another origin', { Origin: 'https://evil.example.test', 'X-CSRF': '1' }],
    ['Origin: null', { Origin: 'null', 'X-CSRF': '1' }],
    ['no Origin at all', { 'X-CSRF': '1' }],
    [
      'a cross-site fetch',
      { Origin: 'https://evil.example.test', 'X-CSRF': '1', 'Sec-Fetch-Site': 'cross-site' },
    ],
  ])(
    'when an unsafe request has %s, then it is 403 before anything runs',
    async (_name, headers) => {
      const res = await statusUpdate().set(headers);
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 'CSRF_REJECTED', source: 'gateway', status: 403 });
      expect(chat.requests).toHaveLength(0);
    },
  );

  it('when a classic cross-site form posts, then it is refused', async () => {
    const res = await request(gw.app)
      .post('/api/chat/users/4/status')
      .set('Origin', 'https://evil.example.test')
      .type('form')
      .send('status_text=pwned');
    expect(res.status).toBe(403);
    expect(chat.requests).toHaveLength(0);
  });

  it('when the request is same-origin by Sec-Fetch-Site, then it passes without an Origin match', async () => {
    await statusUpdate().set({ 'X-CSRF': '1', 'Sec-Fetch-Site': 'same-origin' }).expect(204);
  });

  it('when the frontend sends its origin and the header, then it passes; safe methods need neither', async () => {
    await statusUpdate().set({ Origin: APP_ORIGIN, 'X-CSRF': '1' }).expect(204);
    await request(gw.app)
      .get('/api/chat/drafts')
      .set('Origin', 'https://evil.example.test')
      .expect(200);
  });
});

describe('CORS', () => {
  it('when the frontend preflights a credentialed unsafe request, then only its own origin is allowed, never *', async () => {
    const res = await request(gw.app)
      .options('/api/chat/users/4/status')
      .set('Origin', APP_ORIGIN)
      .set('Access-Control-Request-Method', 'POST')
      .set('Access-Control-Request-Headers', 'content-type,x-csrf');
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    expect(res.headers['access-control-allow-headers']).toMatch(/X-CSRF/i);
    expect(res.headers.vary).toMatch(/Origin/);
  });

  it('when a page preflights a request with every header contract section 1 names, then each is allowed', async () => {
    const asked = ['traceparent', 'tracestate', 'If-None-Match', 'Last-Event-ID', 'X-CSRF'];
    const res = await request(gw.app)
      .options('/api/events')
      .set('Origin', APP_ORIGIN)
      .set('Access-Control-Request-Method', 'GET')
      .set('Access-Control-Request-Headers', asked.join(',').toLowerCase());
    expect(res.status).toBe(204);
    const allowed = String(res.headers['access-control-allow-headers'])
      .toLowerCase()
      .split(/\s*,\s*/);
    expect(asked.filter((name) => !allowed.includes(name.toLowerCase()))).toEqual([]);
  });

  it('when another origin preflights, then nothing is allowed', async () => {
    const res = await request(gw.app)
      .options('/api/chat/users/4/status')
      .set('Origin', 'https://evil.example.test')
      .set('Access-Control-Request-Method', 'POST');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('when no origin is configured, then even a would-be wildcard gets no CORS headers', async () => {
    const closed = await createTestGateway({
      searchOrigin: search.origin,
      env: { CORS_ORIGINS: '' },
    });
    const res = await request(closed.app).get('/api/search?q=a').set('Origin', APP_ORIGIN);
    await closed.close();
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });
});

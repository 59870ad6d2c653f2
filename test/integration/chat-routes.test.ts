import request from 'supertest';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createChatSimulator, type ChatSimulator } from '../../simulators/chat/chat-simulator.js';
import {
  createSearchSimulator,
  type SearchSimulator,
} from '../../simulators/search/search-simulator.js';
import { rawRequest } from '../helpers/raw-socket.js';
import {
  BROWSER_HEADERS,
  SEARCH_TOKEN,
  createTestGateway,
  type TestGateway,
} from '../helpers/test-gateway.js';
import {
  createZulipOpenApiValidator,
  type ZulipOpenApiValidator,
} from '../helpers/zulip-openapi.js';

let chat: ChatSimulator;
let search: SearchSimulator;
let openapi: ZulipOpenApiValidator;
const gateways: TestGateway[] = [];

beforeAll(async () => {
  chat = createChatSimulator();
  search = createSearchSimulator({ clientToken: SEARCH_TOKEN });
  await Promise.all([chat.listen(), search.listen()]);
  openapi = await createZulipOpenApiValidator();
});
afterAll(async () => {
  await Promise.all([chat.close(), search.close()]);
});
beforeEach(() => {
  chat.requests.length = 0;
  chat.faults.clear();
  chat.setFeatureLevel(506);
});
afterEach(async () => {
  await Promise.all(gateways.splice(0).map((g) => g.close()));
  // Every request the gateway sent must be one the real server documents.
  for (const sent of chat.requests) {
    expect(
      openapi.validateRequest({
        method: sent.method,
        path: sent.url,
        headers: sent.headers,
        ...(sent.body === '' ? {} : { body: sent.body }),
      }),
      `${sent.method} ${sent.url}`,
    ).toEqual([]);
  }
});

type Kind = Parameters<ChatSimulator['credentials']>[0];

/** A gateway in service mode acting as the given chat user. */
async function gatewayAs(kind: Kind = 'administrator', env: Record<string, string> = {}) {
  const { email, apiKey } = chat.credentials(kind);
  const gw = await createTestGateway({
    searchOrigin: search.origin,
    chatOrigin: chat.origin,
    cache: 'redis',
    env: {
      CHAT_AUTH_MODE: 'service',
      CHAT_EMAIL: email,
      CHAT_API_KEY: apiKey,
      ...env,
    },
  });
  gateways.push(gw);
  return gw;
}

const sentTo = (path: string) =>
  chat.requests.filter((r) => r.pathname.startsWith(`/api/v1${path}`));

describe('GET /api/chat/drafts', () => {
  it('when the service account has drafts, then it gets {count, drafts} newest first, unwrapped, never cached', async () => {
    const gw = await gatewayAs('owner');
    const res = await request(gw.app)
      .get('/api/chat/drafts')
      .set('X-Request-Id', 'drafts-1')
      .set('Cookie', 'sid=x');
    expect(res.status).toBe(200);
    const body = res.body as {
      count: number;
      drafts: { timestamp: number }[];
      result?: string;
      msg?: string;
    };
    expect(body.result).toBeUndefined();
    expect(body.msg).toBeUndefined();
    expect(body.count).toBe(body.drafts.length);
    expect(body.count).toBeGreaterThan(1);
    const stamps = body.drafts.map((d) => d.timestamp);
    expect(stamps).toEqual([...stamps].sort((a, b) => b - a));
    expect(res.headers['x-cache']).toBeUndefined();

    const sent = sentTo('/drafts')[0]!;
    const { email, apiKey } = chat.credentials('owner');
    expect(sent.headers.authorization).toBe(
      `Basic ${Buffer.from(`${email}:${apiKey}`).toString('base64')}`,
    );
    expect(sent.headers['x-request-id']).toBe('drafts-1');
    expect(sent.headers.cookie).toBeUndefined();

    await request(gw.app).get('/api/chat/drafts').expect(200);
    expect(sentTo('/drafts')).toHaveLength(2);
  });
});

describe('GET /api/chat/channel-folders', () => {
  const ids = (res: request.Response) =>
    (res.body as { channel_folders: { id: number }[] }).channel_folders.map((f) => f.id);

  it('when asked without archived folders, then active folders come sorted by order and the upstream got include_archived=false', async () => {
    const gw = await gatewayAs();
    const res = await request(gw.app).get('/api/chat/channel-folders');
    expect(res.status).toBe(200);
    expect(ids(res)).toEqual([2, 4, 1]);
    expect(res.headers['x-cache']).toBe('MISS');
    expect(sentTo('/channel_folders')[0]!.url).toBe(
      '/api/v1/channel_folders?include_archived=false',
    );
  });

  it('when true and 1 are asked, then they share one cache entry; false, 0 and absent share another', async () => {
    const gw = await gatewayAs();
    const a = await request(gw.app).get('/api/chat/channel-folders?include_archived=true');
    const b = await request(gw.app).get('/api/chat/channel-folders?include_archived=1');
    const c = await request(gw.app).get('/api/chat/channel-folders?include_archived=0');
    const d = await request(gw.app).get('/api/chat/channel-folders');
    expect(ids(a)).toEqual([2, 4, 1, 3, 5]);
    expect([a, b, c, d].map((r) => r.headers['x-cache'])).toEqual(['MISS', 'HIT', 'MISS', 'HIT']);
    expect(sentTo('/channel_folders').map((r) => r.url)).toEqual([
      '/api/v1/channel_folders?include_archived=true',
      '/api/v1/channel_folders?include_archived=false',
    ]);
  });

  it('when the server predates feature level 414, then folders come sorted by id', async () => {
    chat.setFeatureLevel(413);
    const gw = await gatewayAs();
    const res = await request(gw.app).get('/api/chat/channel-folders?include_archived=true');
    expect(ids(res)).toEqual([1, 2, 3, 4, 5]);
  });

  it('when the server predates channel folders (FL 388), then it is a 502', async () => {
    chat.setFeatureLevel(388);
    const gw = await gatewayAs();
    const res = await request(gw.app).get('/api/chat/channel-folders');
    expect(res.status).toBe(502);
    expect(res.body).toMatchObject({ code: 'UPSTREAM_BAD_RESPONSE', source: 'chat' });
  });

  it('when include_archived is not a contract boolean, then it is 400 with no upstream call', async () => {
    const gw = await gatewayAs();
    const res = await request(gw.app).get('/api/chat/channel-folders?include_archived=yes');
    expect(res.status).toBe(400);
    expect((res.body as { detail: string }).detail).toContain(
      'include_archived must be true, false, 1 or 0',
    );
    expect(chat.requests).toHaveLength(0);
  });

  it('when the chat server fails and the entry is inside its error window, then the stale folders are served', async () => {
    const gw = await gatewayAs('administrator', {
      CHANNEL_FOLDERS_CACHE_TTL_SECONDS: '0',
      CHANNEL_FOLDERS_CACHE_STALE_SECONDS: '0',
    });
    const fresh = await request(gw.app).get('/api/chat/channel-folders').expect(200);
    await gw.loader.settled(); // the entry is written after the answer
    chat.faults.add({ fault: { kind: 'status', status: 502 } });
    const res = await request(gw.app).get('/api/chat/channel-folders');
    expect(res.status).toBe(200);
    expect(res.headers['x-cache']).toBe('STALE');
    expect(res.text).toBe(fresh.text);
  });
});

describe('GET /api/chat/users/{email}', () => {
  it('when the user exists, then it is {user} and the email travels as one encoded segment with JSON booleans', async () => {
    const gw = await gatewayAs();
    const res = await request(gw.app).get(
      '/api/chat/users/marie@acme.test?client_gravatar=1&include_custom_profile_fields=0',
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      user: { user_id: 4, full_name: expect.any(String) as string },
    });
    expect(sentTo('/users/')[0]!.url).toBe(
      '/api/v1/users/marie%40acme.test?client_gravatar=true&include_custom_profile_fields=false',
    );
  });

  it('when the dummy address is used, then it is found whatever the visibility', async () => {
    const gw = await gatewayAs('member');
    const res = await request(gw.app).get('/api/chat/users/user6@chat.example.test');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ user: { user_id: 6, delivery_email: null } });
  });

  it('when the chat server says No such user, then it is 404 with its message', async () => {
    const gw = await gatewayAs();
    const res = await request(gw.app).get('/api/chat/users/nobody@acme.test');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'NOT_FOUND', source: 'chat', detail: 'No such user' });
  });

  it('when the address contains a slash and dots, then it still reaches the server as one segment', async () => {
    const gw = await gatewayAs();
    const res = await rawRequest(gw.app, {
      path: '/api/chat/users/a%2F..%2F..%2Fdrafts@acme.test',
    });
    expect(res.status).toBe(404);
    expect(sentTo('/users/')[0]!.url).toBe('/api/v1/users/a%2F..%2F..%2Fdrafts%40acme.test');
    expect(sentTo('/drafts')).toHaveLength(0);
  });

  it.each([
    ['no @', '/api/chat/users/marie.acme.test'],
    ['two @', '/api/chat/users/a@b@acme.test'],
    ['a space', '/api/chat/users/marie%20x@acme.test'],
    ['a control character', '/api/chat/users/marie%0a@acme.test'],
    ['255 characters', `/api/chat/users/${'a'.repeat(245)}@acme.test`],
    ['a dot-dot segment', '/api/chat/users/%2e%2e'],
    ['an encoded traversal', '/api/chat/users/..%2F..%2Fdrafts'],
    ['a bad boolean', '/api/chat/users/marie@acme.test?client_gravatar=yes'],
  ])('when the request has %s, then it is 400 with no upstream call', async (_name, path) => {
    const gw = await gatewayAs();
    const res = await rawRequest(gw.app, { path });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'VALIDATION_FAILED', source: 'gateway' });
    expect(chat.requests).toHaveLength(0);
  });
});

describe('POST /api/chat/users/{user_id}/status', () => {
  const octopus = '\u{1F419}';

  it('when an administrator updates a status, then it is 204 and the server got a form body', async () => {
    const gw = await gatewayAs('administrator');
    const res = await request(gw.app).post('/api/chat/users/4/status').set(BROWSER_HEADERS).send({
      status_text: 'On vacation & away',
      emoji_name: 'car',
      emoji_code: '1f697',
      reaction_type: 'unicode_emoji',
    });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    const sent = sentTo('/users/4/status')[0]!;
    expect(sent.method).toBe('POST');
    expect(sent.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(sent.body))).toEqual({
      status_text: 'On vacation & away',
      emoji_name: 'car',
      emoji_code: '1f697',
      reaction_type: 'unicode_emoji',
    });
  });

  it('when 60 emoji (code points) are sent, then it passes; 61 fail before any upstream call', async () => {
    const gw = await gatewayAs();
    await request(gw.app)
      .post('/api/chat/users/4/status')
      .set(BROWSER_HEADERS)
      .send({ status_text: octopus.repeat(60) })
      .expect(204);
    await request(gw.app)
      .post('/api/chat/users/4/status')
      .set(BROWSER_HEADERS)
      .send({ status_text: `  ${'x'.repeat(60)}  ` })
      .expect(204);
    const res = await request(gw.app)
      .post('/api/chat/users/4/status')
      .set(BROWSER_HEADERS)
      .send({ status_text: octopus.repeat(61) });
    expect(res.status).toBe(400);
    expect((res.body as { detail: string }).detail).toContain(
      'status_text must be at most 60 characters',
    );
    expect(sentTo('/users/4/status')).toHaveLength(2);
  });

  it('when a member updates another user, then the chat server refuses and it is 403 with its message', async () => {
    const gw = await gatewayAs('member');
    const res = await request(gw.app)
      .post('/api/chat/users/2/status')
      .set(BROWSER_HEADERS)
      .send({ status_text: 'hi' });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({
      code: 'FORBIDDEN',
      source: 'chat',
      detail: 'Insufficient permission',
    });
  });

  it('when the target user does not exist, then it is 404', async () => {
    const gw = await gatewayAs();
    const res = await request(gw.app)
      .post('/api/chat/users/9999/status')
      .set(BROWSER_HEADERS)
      .send({ status_text: 'hi' });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'NOT_FOUND', detail: 'No such user' });
  });

  it('when the chat server rejects the emoji, then its message survives in a 400', async () => {
    const gw = await gatewayAs();
    const res = await request(gw.app)
      .post('/api/chat/users/4/status')
      .set(BROWSER_HEADERS)
      .send({ emoji_name: 'no_such_emoji' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      code: 'BAD_REQUEST',
      source: 'chat',
      detail: "Emoji 'no_such_emoji' does not exist",
    });
  });

  it.each([
    [
      'an empty object',
      {},
      'the body must set at least one of status_text, emoji_name, emoji_code, reaction_type',
    ],
    [
      'emoji_code without emoji_name',
      { emoji_code: '1f697' },
      'emoji_code and reaction_type need emoji_name',
    ],
    [
      'reaction_type without emoji_name',
      { reaction_type: 'unicode_emoji' },
      'emoji_code and reaction_type need emoji_name',
    ],
    [
      'an unknown reaction_type',
      { emoji_name: 'car', reaction_type: 'zulip_extra_emoji' },
      'reaction_type must be one of unicode_emoji, realm_emoji, service_extra_emoji',
    ],
    ['an unknown field', { status_text: 'x', away: true }, 'unknown field "away"'],
    [
      'a prototype key',
      JSON.parse('{"status_text":"x","__proto__":{"admin":true}}') as object,
      'unknown field "__proto__"',
    ],
    ['a number as text', { status_text: 5 }, 'status_text must be a string'],
    ['an array body', ['status_text'], 'the body must be a JSON object'],
  ])('when the body is %s, then it is 400 with no upstream call', async (_name, body, message) => {
    const gw = await gatewayAs();
    const res = await request(gw.app)
      .post('/api/chat/users/4/status')
      .set(BROWSER_HEADERS)
      .send(body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'VALIDATION_FAILED', source: 'gateway' });
    expect(
      (res.body as { errors: { message: string }[] }).errors.map((e) => e.message).join(' | '),
    ).toContain(message);
    expect(chat.requests).toHaveLength(0);
  });

  it.each(['0', '-1', '%2B4', '04', '4.0', '1e3', '0x10', '2147483648', 'abc', '4%20'])(
    'when user_id is %s, then it is 400 with no upstream call',
    async (id) => {
      const gw = await gatewayAs();
      const res = await rawRequest(gw.app, {
        method: 'POST',
        path: `/api/chat/users/${id}/status`,
        headers: { 'content-type': 'application/json', ...BROWSER_HEADERS },
        body: '{"status_text":"x"}',
      });
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body)).toMatchObject({ code: 'VALIDATION_FAILED' });
      expect(chat.requests).toHaveLength(0);
    },
  );

  it('when the body is form-encoded, then it is 415 with no upstream call', async () => {
    const gw = await gatewayAs();
    const res = await request(gw.app)
      .post('/api/chat/users/4/status')
      .set(BROWSER_HEADERS)
      .type('form')
      .send('status_text=hi');
    expect(res.status).toBe(415);
    expect(chat.requests).toHaveLength(0);
  });
});

describe('DELETE /api/chat/emoji/{emoji_name}', () => {
  it('when an administrator deactivates an emoji, then it is 204; a second time it is 404', async () => {
    const gw = await gatewayAs();
    await request(gw.app).delete('/api/chat/emoji/ship_it').set(BROWSER_HEADERS).expect(204);
    const again = await request(gw.app).delete('/api/chat/emoji/ship_it').set(BROWSER_HEADERS);
    expect(again.status).toBe(404);
    expect(sentTo('/realm/emoji/ship_it')).toHaveLength(2);
  });

  it.each([189, 190, 506])(
    'when the emoji is missing at feature level %s, then it is 404 with the server message',
    async (level) => {
      chat.setFeatureLevel(level);
      const gw = await gatewayAs();
      const res = await request(gw.app).delete('/api/chat/emoji/party').set(BROWSER_HEADERS);
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({
        code: 'NOT_FOUND',
        source: 'chat',
        detail: "Emoji 'party' does not exist",
      });
    },
  );

  it("when a member deletes someone else's emoji, then it is 403", async () => {
    const gw = await gatewayAs('member');
    const res = await request(gw.app).delete('/api/chat/emoji/party_parrot').set(BROWSER_HEADERS);
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'FORBIDDEN', source: 'chat' });
  });

  it('when the name has spaces and unicode, then it travels as one encoded segment', async () => {
    const gw = await gatewayAs();
    await request(gw.app)
      .delete('/api/chat/emoji/caf%C3%A9%20time')
      .set(BROWSER_HEADERS)
      .expect(404);
    expect(chat.requests[0]!.url).toBe('/api/v1/realm/emoji/caf%C3%A9%20time');
  });

  it.each([
    ['a dot-dot name', '/api/chat/emoji/%2e%2e'],
    ['a single dot', '/api/chat/emoji/%2E'],
    ['an encoded slash', '/api/chat/emoji/..%2Fusers'],
    ['a backslash', '/api/chat/emoji/a%5Cb'],
    ['a control character', '/api/chat/emoji/a%00b'],
    ['101 characters', `/api/chat/emoji/${'e'.repeat(101)}`],
  ])('when the path has %s, then it is 400 with no upstream call', async (_name, path) => {
    const gw = await gatewayAs();
    const res = await rawRequest(gw.app, { method: 'DELETE', path, headers: BROWSER_HEADERS });
    expect(res.status).toBe(400);
    expect(chat.requests).toHaveLength(0);
  });
});

describe("the chat document's errors (section 7) through the gateway", () => {
  const zulipError = (msg: string) => JSON.stringify({ result: 'error', msg, code: 'BAD_REQUEST' });
  // Some of these the gateway itself prevents (its own input rules); a server may still send
  // them, and each must keep its message and get the contract's status.
  it.each([
    ['status', 400, 'Insufficient permission', 403, 'FORBIDDEN'],
    ['status', 400, 'Client did not pass any new values.', 400, 'BAD_REQUEST'],
    ['status', 400, 'status_text is too long (limit: 60 characters)', 400, 'BAD_REQUEST'],
    [
      'status',
      400,
      'Client must pass emoji_name if they pass either emoji_code or reaction_type.',
      400,
      'BAD_REQUEST',
    ],
    ['status', 400, "Emoji 'nope' does not exist", 400, 'BAD_REQUEST'],
    ['status', 400, 'Invalid emoji name.', 400, 'BAD_REQUEST'],
    ['status', 400, 'Invalid custom emoji.', 400, 'BAD_REQUEST'],
    ['status', 400, 'No such user', 404, 'NOT_FOUND'],
    ['emoji', 404, "Emoji 'nope' does not exist", 404, 'NOT_FOUND'],
    ['emoji', 400, "Emoji 'nope' does not exist", 404, 'NOT_FOUND'],
    ['emoji', 400, 'Must be an organization administrator or emoji author', 403, 'FORBIDDEN'],
    ['user', 400, 'No such user', 404, 'NOT_FOUND'],
  ] as const)(
    'when the %s call gets HTTP %s "%s", then it is %s %s with the message kept',
    async (route, upstreamStatus, msg, status, code) => {
      const gw = await gatewayAs();
      chat.faults.add({
        fault: { kind: 'status', status: upstreamStatus, body: zulipError(msg) },
        times: 1,
      });
      const res =
        route === 'status'
          ? await request(gw.app)
              .post('/api/chat/users/4/status')
              .set(BROWSER_HEADERS)
              .send({ status_text: 'x' })
          : route === 'emoji'
            ? await request(gw.app).delete('/api/chat/emoji/nope').set(BROWSER_HEADERS)
            : await request(gw.app).get('/api/chat/users/marie@acme.test');
      expect(res.status).toBe(status);
      expect(res.body).toMatchObject({ code, source: 'chat', detail: msg, status });
    },
  );

  it('when the server sends the documented invalid-emoji messages itself, then they arrive as 400 with their text', async () => {
    const gw = await gatewayAs();
    const name = await request(gw.app)
      .post('/api/chat/users/4/status')
      .set(BROWSER_HEADERS)
      .send({ emoji_name: 'car', emoji_code: '1f419', reaction_type: 'unicode_emoji' });
    expect(name.body).toMatchObject({ status: 400, detail: 'Invalid emoji name.' });
    const custom = await request(gw.app)
      .post('/api/chat/users/4/status')
      .set(BROWSER_HEADERS)
      .send({ emoji_name: 'green_tick', emoji_code: '999', reaction_type: 'realm_emoji' });
    expect(custom.body).toMatchObject({ status: 400, detail: 'Invalid custom emoji.' });
  });
});

describe('chat upstream faults', () => {
  it('when the chat server rejects the gateway credentials, then it is 502 without WWW-Authenticate', async () => {
    const gw = await gatewayAs('administrator', { CHAT_API_KEY: 'x'.repeat(32) });
    const res = await request(gw.app).get('/api/chat/drafts');
    expect(res.status).toBe(502);
    expect(res.body).toMatchObject({ code: 'UPSTREAM_AUTH_FAILED', source: 'chat' });
    expect(res.headers['www-authenticate']).toBeUndefined();
  });

  it('when the chat server rate limits, then it is 429 with its Retry-After in whole seconds', async () => {
    const gw = await gatewayAs();
    chat.rateLimitNext(7);
    const res = await request(gw.app).get('/api/chat/drafts');
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('7');
    expect(res.body).toMatchObject({ code: 'RATE_LIMITED', source: 'chat' });
  });

  it.each([
    ['answers 500', { kind: 'status', status: 500 } as const, 502, 'UPSTREAM_ERROR'],
    ['resets the connection', { kind: 'reset' } as const, 502, 'UPSTREAM_UNAVAILABLE'],
    ['sends a non-JSON body', { kind: 'malformed' } as const, 502, 'UPSTREAM_BAD_RESPONSE'],
    ['is slower than the deadline', { kind: 'delay', ms: 1500 } as const, 504, 'UPSTREAM_TIMEOUT'],
    [
      'breaks the schema',
      {
        kind: 'status',
        status: 200,
        body: '{"result":"success","msg":"","drafts":"none"}',
      } as const,
      502,
      'UPSTREAM_BAD_RESPONSE',
    ],
  ])('when the chat server %s, then it is %s %s', async (_name, fault, status, code) => {
    // Only the delay meets a short deadline, and passes it however slow the machine is; the
    // other rows' answers, like the other tests, keep the default, so that a slow turn of a
    // loaded machine is never taken for a slow chat server (issue 31, item 10).
    const gw = await gatewayAs(
      'administrator',
      fault.kind === 'delay' ? { CHAT_TIMEOUT_MS: '400' } : {},
    );
    chat.faults.add({ fault });
    const res = await request(gw.app).get('/api/chat/drafts');
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ code, source: 'chat' });
  });

  it('when the status update fails upstream, then it is not retried', async () => {
    const gw = await gatewayAs();
    chat.faults.add({ fault: { kind: 'reset' }, times: 1 });
    await request(gw.app)
      .post('/api/chat/users/4/status')
      .set(BROWSER_HEADERS)
      .send({ status_text: 'x' })
      .expect(502);
    expect(sentTo('/users/4/status')).toHaveLength(1);
  });
});

describe('chat credentials', () => {
  it('when chat routes are used in session mode before sessions exist, then it is 401 and no upstream call', async () => {
    const gw = await createTestGateway({ searchOrigin: search.origin, chatOrigin: chat.origin });
    gateways.push(gw);
    const res = await request(gw.app).get('/api/chat/drafts');
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'UNAUTHORIZED', source: 'gateway' });
    expect(chat.requests).toHaveLength(0);
  });

  it('when chat calls succeed and fail, then the API key appears in no response, header or log line', async () => {
    const gw = await gatewayAs();
    const { apiKey } = chat.credentials('administrator');
    const basic = Buffer.from(`${chat.credentials('administrator').email}:${apiKey}`).toString(
      'base64',
    );
    const responses = [
      await request(gw.app).get('/api/chat/drafts'),
      await request(gw.app).get('/api/chat/users/nobody@acme.test'),
      await request(gw.app)
        .post('/api/chat/users/4/status')
        .set(BROWSER_HEADERS)
        .send({ status_text: 'x'.repeat(61) }),
    ];
    chat.faults.add({
      fault: {
        kind: 'status',
        status: 401,
        body: '{"result":"error","msg":"Invalid API key","code":"INVALID_API_KEY"}',
      },
    });
    responses.push(await request(gw.app).get('/api/chat/drafts'));
    for (const res of responses) {
      for (const secret of [apiKey, basic]) {
        expect(res.text).not.toContain(secret);
        expect(JSON.stringify(res.headers)).not.toContain(secret);
      }
    }
    expect(gw.logs.text()).not.toContain(apiKey);
    expect(gw.logs.text()).not.toContain(basic);
  });
});

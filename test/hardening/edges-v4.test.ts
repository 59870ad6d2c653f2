import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { openClient, parseResponse } from '../helpers/raw-socket.js';
import { BROWSER_HEADERS, type TestGateway } from '../helpers/test-gateway.js';
import { keysUnder } from '../helpers/test-redis.js';
import { useUpstreams } from '../helpers/upstreams.js';
import { asResponse, expectProblem } from './expect-problem.js';

/*
 * The edges of contract v4 section 7 (issue 31, rows 7, 8 and 11), each tried the way a client
 * or a proxy in front of the gateway would: a request without Host on a real socket, forwarded
 * addresses written with a port, and JSON text holding a lone surrogate.
 */

const upstreams = useUpstreams();

describe('a request without Host (issue 31 row 7)', () => {
  it.each([
    ['the public port', 'url'],
    ['the operations port', 'opsUrl'],
  ] as const)(
    'when an HTTP/1.1 request on %s has no Host header, then it is 400 problem+json naming the header, and the connection closes',
    async (_port, which) => {
      const gw = await upstreams.gateway({ env: { OPS_PORT: '0' } });
      const client = await openClient(gw.gateway[which]!);
      const path = which === 'url' ? '/api/search?q=lamp' : '/healthz';
      client.socket.write(`GET ${path} HTTP/1.1\r\nAccept: application/json\r\n\r\n`);
      // The server ends the connection: the client never closes its side.
      const res = parseResponse(await client.closed);
      const body = expectProblem(asResponse(res), 400, 'BAD_REQUEST');
      expect(body.detail).toMatch(/no Host header/);
      expect(body.requestId).toBe(res.headers['x-request-id']);
      expect(res.headers['connection']).toBe('close');
      expect(res.headers['content-length']).toBe(String(Buffer.byteLength(res.body)));
      expect(res.rest.length).toBe(0);
      expect(upstreams.calls()).toEqual([]);
      const line = await gw.logs.waitFor((l) => l['msg'] === 'request without Host answered');
      expect(line).toMatchObject({ level: 30, code: 'BAD_REQUEST' });
    },
  );

  it('when an HTTP/1.0 request has no Host header, then it is served as before (HTTP/1.0 has no such rule)', async () => {
    const gw = await upstreams.gateway();
    const client = await openClient(gw.gateway.url);
    client.socket.write('GET /healthz HTTP/1.0\r\n\r\n');
    const res = parseResponse(await client.closed);
    expect(res.status).toBe(200);
  });

  it('when an HTTP/1.1 request names its Host, then it is served on the same connection as before', async () => {
    const gw = await upstreams.gateway();
    const client = await openClient(gw.gateway.url);
    client.socket.write('GET /healthz HTTP/1.1\r\nHost: gateway.test\r\nConnection: close\r\n\r\n');
    expect(parseResponse(await client.closed).status).toBe(200);
  });
});

describe('forwarded addresses written with a port (issue 31 row 8)', () => {
  const from = (address: string) => ({ 'X-Forwarded-For': address });
  const search = (gw: TestGateway, address: string) =>
    request(gw.app).get('/api/search?q=coffee').set(from(address));
  const clientKeys = async (gw: TestGateway) =>
    (await keysUnder(gw.inspector!, `${gw.prefix}ratelimit:client:`))
      .map((key) => key.slice(`${gw.prefix}ratelimit:client:`.length))
      .sort();

  it.each([
    ['loopback', '198.51.100.7:1234', '198.51.100.7:40001', '198.51.100.7:65535', '198.51.100.7'],
    ['1', '198.51.100.7:1234', '198.51.100.7:40001', '198.51.100.7', '198.51.100.7'],
    ['loopback', '[2001:db8::1]:443', '[2001:db8::1]:444', '[2001:db8::1]', '2001:db8::/64'],
    ['1', '[2001:db8::1]:443', '[2001:db8::1]:8443', '2001:db8::1', '2001:db8::/64'],
  ])(
    'when TRUST_PROXY=%s and a proxy forwards %s, %s, then %s, then the three share one budget (429 on the third)',
    async (trust, first, second, third, key) => {
      const gw = await upstreams.gateway({
        cache: 'redis',
        env: { RATE_LIMIT_PER_CLIENT: '2', TRUST_PROXY: trust },
      });
      expect((await search(gw, first)).status).toBe(200);
      expect((await search(gw, second)).status).toBe(200);
      const limited = await search(gw, third);
      expect(limited.status).toBe(429);
      expect(limited.body).toMatchObject({ code: 'RATE_LIMITED' });
      expect(await clientKeys(gw)).toEqual([key]);
    },
  );

  it('when a trusted proxy writes its own address with a port, then it is still trusted and the client before it is counted', async () => {
    const gw = await upstreams.gateway({
      cache: 'redis',
      env: { RATE_LIMIT_PER_CLIENT: '2', TRUST_PROXY: 'loopback' },
    });
    expect((await search(gw, '198.51.100.9, 127.0.0.1:5555')).status).toBe(200);
    expect((await search(gw, '198.51.100.9, [::1]:5556')).status).toBe(200);
    expect((await search(gw, '198.51.100.9')).status).toBe(429);
    expect(await clientKeys(gw)).toEqual(['198.51.100.9']);
  });

  it('when wrong passwords come from one forwarded address with a different port each, then the login limit counts them together', async () => {
    const gw = await upstreams.gateway({
      cache: 'redis',
      env: { LOGIN_RATE_LIMIT_PER_CLIENT: '2', TRUST_PROXY: 'loopback' },
    });
    const attempt = (address: string) =>
      request(gw.app)
        .post('/api/auth/login')
        .set({ ...BROWSER_HEADERS, ...from(address) })
        .send({ email: 'marie@acme.test', password: 'wrong' });
    expect((await attempt('198.51.100.7:1111')).status).toBe(401);
    expect((await attempt('[2001:db8::1]:2222')).status).toBe(401);
    expect((await attempt('198.51.100.7:3333')).status).toBe(401);
    expect((await attempt('[2001:db8::1]:4444')).status).toBe(401);
    const limited = [await attempt('198.51.100.7:5555'), await attempt('[2001:db8::1]:6666')];
    expect(limited.map((r) => r.status)).toEqual([429, 429]);
    expect(limited[0]!.headers['ratelimit-policy']).toBe('"login";q=2;w=900');
    expect(
      upstreams.chat.requests.filter((r) => r.pathname === '/api/v1/fetch_api_key'),
    ).toHaveLength(4);
  });
});

describe('text bound for the chat server holds no lone surrogate (issue 31 row 11)', () => {
  /** A JSON body as the client wrote it: the escapes reach the gateway as six characters each. */
  const postStatus = (gw: TestGateway, json: string) =>
    request(gw.app)
      .post('/api/chat/users/4/status')
      .set(BROWSER_HEADERS)
      .set('Content-Type', 'application/json')
      .send(json);

  it.each([
    ['status_text', 'a lone high surrogate', '{"status_text":"away \\ud800"}'],
    ['status_text', 'a lone low surrogate', '{"status_text":"\\udc19 away"}'],
    ['status_text', 'a reversed pair', '{"status_text":"\\udc19\\ud83d"}'],
    ['emoji_name', 'a lone surrogate', '{"emoji_name":"car\\ud83d"}'],
    ['emoji_code', 'a lone surrogate', '{"emoji_name":"car","emoji_code":"\\ud83d"}'],
  ])(
    'when %s holds %s, then it is 400 VALIDATION_FAILED naming the field, and the chat server receives nothing',
    async (field, _what, json) => {
      const gw = await upstreams.serviceGateway('administrator');
      const res = await postStatus(gw, json);
      const body = expectProblem(res, 400, 'VALIDATION_FAILED') as unknown as {
        errors: { path: string; message: string }[];
      };
      expect(body.errors).toEqual([
        {
          path: `body.${field}`,
          message: `${field} must be valid Unicode text, without lone surrogates`,
        },
      ]);
      expect(upstreams.chat.requests).toEqual([]);
    },
  );

  it('when status_text holds a well-formed surrogate pair, then it reaches the chat server as that character', async () => {
    const gw = await upstreams.serviceGateway('administrator');
    await postStatus(gw, '{"status_text":"\\ud83d\\udc19 away"}').expect(204);
    const sent = upstreams.chat.requests.filter((r) => r.pathname === '/api/v1/users/4/status');
    expect(sent).toHaveLength(1);
    expect(new URLSearchParams(sent[0]!.body).get('status_text')).toBe('🐙 away');
  });

  it('when a login email holds a lone surrogate, then it is 400 VALIDATION_FAILED and the chat server receives nothing', async () => {
    const gw = await upstreams.sessionGateway();
    const res = await request(gw.app)
      .post('/api/auth/login')
      .set(BROWSER_HEADERS)
      .set('Content-Type', 'application/json')
      .send('{"email":"marie\\ud800@acme.test","password":"wrong"}');
    const body = expectProblem(res, 400, 'VALIDATION_FAILED') as unknown as {
      errors: { path: string }[];
    };
    expect(body.errors.map((e) => e.path)).toEqual(['body.email']);
    expect(upstreams.chat.requests).toEqual([]);
  });

  it('when a login password holds a lone surrogate, then it is 400 VALIDATION_FAILED and the chat server receives nothing', async () => {
    const gw = await upstreams.sessionGateway();
    const res = await request(gw.app)
      .post('/api/auth/login')
      .set(BROWSER_HEADERS)
      .set('Content-Type', 'application/json')
      .send('{"email":"marie@acme.test","password":"horse\\udfff"}');
    const body = expectProblem(res, 400, 'VALIDATION_FAILED') as unknown as {
      errors: { path: string; message: string }[];
    };
    expect(body.errors).toEqual([
      {
        path: 'body.password',
        message: 'password must be valid Unicode text, without lone surrogates',
      },
    ]);
    expect(upstreams.chat.requests).toEqual([]);
  });
});

import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { sendWire, wireRequest, type WireResponse } from '../helpers/raw-socket.js';
import { APP_ORIGIN } from '../helpers/test-gateway.js';
import { expectProblem, headerOf, useUpstreams, withRequestHeaders } from './hostile-helpers.js';

/*
 * Hostile request headers: request ids and reflected headers carrying CR/LF, junk or megabytes,
 * and Host / forwarding headers trying to get an attacker's host into a cached `next` link.
 */

const upstreams = useUpstreams();

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** A header line the attacker tried to add to the response. */
const INJECTED = /^(x-injected|set-cookie):/im;

/** GET /api/search without q: a 400 envelope that needs no upstream. */
const invalidSearch = (headers: [string, string][]) =>
  wireRequest({ method: 'GET', target: '/api/search', headers });

function expectFreshId(res: WireResponse, hostile: string) {
  expect(res.headers['x-request-id']).toHaveLength(1);
  expect(headerOf(res, 'x-request-id')).toMatch(UUID);
  if (hostile.length > 0) {
    expect(res.head).not.toContain(hostile);
    expect(res.text).not.toContain(hostile);
  }
  expect(res.head).not.toMatch(INJECTED);
}

describe('X-Request-Id', () => {
  it.each<[string, [string, string][]]>([
    ['a space', [['X-Request-Id', 'hostile id']]],
    ['a tab', [['X-Request-Id', 'hostile\tid']]],
    ['a latin-1 byte', [['X-Request-Id', 'hostile\u00e9id']]],
    ['the UTF-8 bytes of U+2028', [['X-Request-Id', 'hostile\u00e2\u0080\u00a8id']]],
    ['129 characters', [['X-Request-Id', 'h'.repeat(129)]]],
    ['8000 characters', [['X-Request-Id', 'h'.repeat(8000)]]],
    ['a percent-encoded CRLF', [['X-Request-Id', 'hostile%0d%0aX-Injected:%201']]],
    ['markup', [['X-Request-Id', '"><script>alert(1)</script>']]],
    ['a JSON fragment', [['X-Request-Id', '","requestId":"forged']]],
    ['a log-forging fragment', [['X-Request-Id', 'hostile\\n{"level":60,"msg":"forged"}']]],
    ['a path', [['X-Request-Id', '../../etc/passwd']]],
    ['a leading dash', [['X-Request-Id', '-hostile-id']]],
    ['an empty value', [['X-Request-Id', '']]],
    [
      'two ids in two headers',
      [
        ['X-Request-Id', 'first-hostile-id'],
        ['X-Request-Id', 'second-hostile-id'],
      ],
    ],
  ])(
    'when X-Request-Id is %s, then a fresh UUID is used in the header, the envelope and the log, and the value is never echoed',
    async (_name, headers) => {
      const gw = await upstreams.serviceGateway();
      const res = await sendWire(gw.app, invalidSearch(headers));
      const body = expectProblem(res, 400, 'VALIDATION_FAILED');
      const hostile = headers.map(([, value]) => value).join(', ');
      expectFreshId(res, hostile);
      expect(body.requestId).toBe(headerOf(res, 'x-request-id'));
      const line = gw.logs.lines().find((l) => (l['req'] as { id?: string } | undefined)?.id);
      expect((line?.['req'] as { id?: string } | undefined)?.id).toBe(body.requestId);
      if (hostile.length > 0) expect(gw.logs.text()).not.toContain(hostile);
      expect(upstreams.calls()).toEqual([]);
    },
  );

  it.each([
    ['CRLF and a header', 'hostile\r\nX-Injected: 1'],
    ['LF and a header', 'hostile\nX-Injected: 1'],
    ['CR and a header', 'hostile\rX-Injected: 1'],
    ['response splitting', 'hostile\r\n\r\n<html>split</html>'],
    ['a planted cookie', 'hostile-id\r\nSet-Cookie: bff_session=planted'],
    ['a NUL', 'hostile\u0000id'],
    ['U+2028', 'hostile\u2028id'],
  ])(
    'when X-Request-Id reaches the app with %s (past a lenient proxy), then a fresh UUID is used and nothing is injected',
    async (_name, hostile) => {
      const gw = await upstreams.serviceGateway();
      const app = withRequestHeaders(gw.app, { 'x-request-id': hostile });
      const res = await sendWire(app, invalidSearch([]));
      const body = expectProblem(res, 400, 'VALIDATION_FAILED');
      expectFreshId(res, hostile);
      expect(res.text).not.toContain('split');
      expect(body.requestId).toBe(headerOf(res, 'x-request-id'));
      expect(gw.logs.text()).not.toContain('X-Injected');
    },
  );

  it('when a raw CRLF splits X-Request-Id into two request headers, then only the well-formed id is reused and no header is injected', async () => {
    const gw = await upstreams.serviceGateway();
    const res = await sendWire(
      gw.app,
      invalidSearch([['X-Request-Id', 'split-id\r\nX-Injected: 1']]),
    );
    expectProblem(res, 400, 'VALIDATION_FAILED');
    expect(headerOf(res, 'x-request-id')).toBe('split-id');
    expect(res.head).not.toMatch(INJECTED);
  });

  it.each([
    ['a bare LF', 'hostile\nX-Injected: 1'],
    ['a bare CR', 'hostile\rX-Injected: 1'],
    ['an obs-fold continuation', 'hostile\r\n X-Injected: 1'],
    ['a NUL', 'hostile\u0000id'],
  ])(
    "when the raw X-Request-Id has %s, then node's parser answers 400 before the app runs and nothing is injected",
    async (_name, hostile) => {
      const gw = await upstreams.serviceGateway();
      const res = await sendWire(gw.app, invalidSearch([['X-Request-Id', hostile]]));
      expect(res.status).toBe(400);
      expect(res.head).not.toMatch(INJECTED);
      expect(res.head).not.toContain('hostile');
      expect(gw.logs.lines().filter((l) => l['req'] !== undefined)).toEqual([]);
    },
  );

  it('when a hostile id comes with a good search, then the search service gets the fresh UUID, not the hostile value', async () => {
    const gw = await upstreams.serviceGateway();
    const res = await sendWire(
      gw.app,
      wireRequest({
        method: 'GET',
        target: '/api/search?q=lamp&k=1',
        headers: [['X-Request-Id', 'hostile id\u00e9']],
      }),
    );
    expect(res.status).toBe(200);
    const id = headerOf(res, 'x-request-id');
    expect(id).toMatch(UUID);
    expect(upstreams.search.requests.map((r) => r.headers['x-request-id'])).toEqual([id]);
  });
});

describe('reflected headers: Origin and Accept', () => {
  it.each<[string, Record<string, string>, boolean]>([
    ['the allowed origin (control)', { origin: APP_ORIGIN }, true],
    ['an origin with CRLF and a header', { origin: `${APP_ORIGIN}\r\nX-Injected: 1` }, false],
    ['an origin with a planted cookie', { origin: `${APP_ORIGIN}\r\nSet-Cookie: a=b` }, false],
    ['an 8000-character origin', { origin: `https://${'o'.repeat(8000)}.test` }, false],
    ['Origin: null', { origin: 'null' }, false],
    ['a look-alike suffix', { origin: `${APP_ORIGIN}.evil.test` }, false],
    ['an explicit default port', { origin: `${APP_ORIGIN}:443` }, false],
    ['upper case', { origin: APP_ORIGIN.toUpperCase() }, false],
    ['a trailing slash', { origin: `${APP_ORIGIN}/` }, false],
    ['two origins joined', { origin: `${APP_ORIGIN}, https://evil.test` }, false],
    ['a wildcard', { origin: '*' }, false],
  ])(
    'when the Origin is %s, then CORS echoes only the exact allowed origin and injects nothing',
    async (_name, headers, allowed) => {
      const gw = await upstreams.serviceGateway();
      const app = withRequestHeaders(gw.app, headers);
      const res = await sendWire(
        app,
        wireRequest({ method: 'GET', target: '/api/nothing', headers: [] }),
      );
      expectProblem(res, 404, 'NOT_FOUND');
      expect(res.head).not.toMatch(INJECTED);
      if (allowed) {
        expect(res.headers['access-control-allow-origin']).toEqual([APP_ORIGIN]);
        expect(headerOf(res, 'access-control-allow-credentials')).toBe('true');
        expect(headerOf(res, 'vary')).toContain('Origin');
      } else {
        expect(res.headers['access-control-allow-origin']).toBeUndefined();
        expect(res.headers['access-control-allow-credentials']).toBeUndefined();
        expect(res.head).not.toContain(headers['origin']!.slice(0, 40));
      }
    },
  );

  it('when a preflight comes from a disallowed origin, then it gets no CORS grant', async () => {
    const gw = await upstreams.serviceGateway();
    const res = await request(gw.app)
      .options('/api/chat/users/4/status')
      .set('Origin', 'https://evil.test')
      .set('Access-Control-Request-Method', 'POST')
      .set('Access-Control-Request-Headers', 'x-csrf, content-type');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    expect(upstreams.calls()).toEqual([]);
  });

  it.each([
    ['text/html', 'text/html'],
    ['an invalid q', '*/*;q=abc'],
    ['separators only', ';;;,,,'],
    ['a tab and junk', 'application/json\tjunk'],
    ['JSON refused with q=0', 'application/json;q=0, application/ld+json;q=0'],
    ['everything refused', '*/*;q=0'],
    ['1000 unknown ranges', 'x/y;q=0.1,'.repeat(1000)],
  ])(
    'when Accept is %s, then it is 406 as problem+json with no upstream call',
    async (_name, accept) => {
      // A refusal leaves nothing behind: one gateway for these cases. No time bound: a parser
      // that backtracks on the 1000 ranges fails by the test's timeout, and a loaded machine
      // is slow by design.
      const gw = await upstreams.fileGateway({ env: upstreams.serviceEnv() });
      const res = await request(gw.app).get('/api/search?q=lamp&k=1').set('Accept', accept);
      expectProblem(res, 406, 'NOT_ACCEPTABLE');
      expect(upstreams.calls()).toEqual([]);
    },
  );

  it('when Accept reaches the app with CRLF and a header, then it is 406 and nothing is injected', async () => {
    const gw = await upstreams.serviceGateway();
    const app = withRequestHeaders(gw.app, { accept: 'text/html\r\nX-Injected: 1' });
    const res = await sendWire(
      app,
      wireRequest({ method: 'GET', target: '/api/search?q=lamp&k=1', headers: [] }),
    );
    expectProblem(res, 406, 'NOT_ACCEPTABLE');
    expect(res.head).not.toMatch(INJECTED);
    expect(upstreams.calls()).toEqual([]);
  });
});

describe('Host and forwarding headers against the cached next link', () => {
  const NEXT = /^\/api\/search\?cursor=[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
  const HOSTILE: [string, Record<string, string>][] = [
    ['Host', { Host: 'evil.test' }],
    ['X-Forwarded-Host', { 'X-Forwarded-Host': 'evil.test' }],
    [
      'X-Forwarded-Host and Proto',
      { 'X-Forwarded-Host': 'evil.test', 'X-Forwarded-Proto': 'javascript' },
    ],
    ['Forwarded', { Forwarded: 'for=1.2.3.4;host=evil.test;proto=https' }],
    ['userinfo in X-Forwarded-Host', { 'X-Forwarded-Host': 'app.example.test@evil.test' }],
    [
      'X-Original-URL and X-Rewrite-URL',
      { 'X-Original-URL': '//evil.test/x', 'X-Rewrite-URL': '//evil.test/x' },
    ],
    ['X-Forwarded-Prefix', { 'X-Forwarded-Prefix': '//evil.test' }],
    [
      'all of them at once',
      {
        Host: 'evil.test',
        'X-Forwarded-Host': 'evil.test',
        'X-Forwarded-Proto': 'http',
        'X-Forwarded-Port': '8443',
        Forwarded: 'host=evil.test;proto=http',
        'X-Forwarded-Prefix': '//evil.test',
      },
    ],
  ];
  const CASES = ['false', 'loopback'].flatMap((trust) =>
    HOSTILE.map(([name, headers]) => [name, trust, headers] as const),
  );

  it.each(CASES)(
    'when an attacker sends %s (TRUST_PROXY=%s) and fills the cache, then neither they nor a later client get a next link off the gateway',
    async (_name, trust, headers) => {
      const gw = await upstreams.serviceGateway('administrator', { TRUST_PROXY: trust });
      const attacker = await request(gw.app).get('/api/search?q=headphones&k=2').set(headers);
      expect(attacker.status).toBe(200);
      expect(attacker.headers['x-cache']).toBe('MISS');
      const next = (attacker.body as { next?: string }).next;
      expect(next).toMatch(NEXT);
      expect(attacker.text).not.toContain('evil');

      const victim = await request(gw.app).get('/api/search?q=headphones&k=2');
      expect(victim.headers['x-cache']).toBe('HIT');
      expect(victim.text).toBe(attacker.text);

      const page2 = await request(gw.app).get(next!);
      expect(page2.status).toBe(200);
      expect(page2.text).not.toContain('evil');
      const searchHost = new URL(upstreams.search.origin).host;
      expect(upstreams.search.requests.map((r) => [r.url, r.headers.host])).toEqual([
        ['/v1/search?q=headphones&k=2', searchHost],
        ['/v1/search?q=headphones&k=2&start=2', searchHost],
      ]);
      for (const sent of upstreams.search.requests) {
        expect(sent.headers['x-forwarded-host']).toBeUndefined();
        expect(sent.headers['forwarded']).toBeUndefined();
      }
    },
  );
});

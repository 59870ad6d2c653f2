import { EventEmitter, once } from 'node:events';
import { connect } from 'node:net';
import request from 'supertest';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSearchSimulator } from '../../simulators/search/search-simulator.js';
import type { Fault } from '../../simulators/sim-faults.js';
import { eventually } from '../helpers/eventually.js';
import { CURSOR_SECRET, SEARCH_TOKEN } from '../helpers/test-gateway.js';
import type { TestGateway } from '../helpers/test-gateway.js';
import { keysUnder } from '../helpers/test-redis.js';
import { useUpstreams } from '../helpers/upstreams.js';

/*
 * Issue 10, "Upstream answers": what one broken or hostile upstream answer can do to the gateway
 * (contract sections 3, 4 and 6, docs/reliability.md). Each test reproduces one of the issue's
 * findings on real sockets against the simulators: item lists far longer than `k`, JSON nested
 * 100,000 deep, bodies over UPSTREAM_MAX_RESPONSE_BYTES, unsanitised Retry-After values,
 * upstream messages echoing the gateway's secrets, a cache entry carrying a CRLF in its content
 * type, an upstream dribbling its answer a byte at a time, and a JSON body sent as HTML.
 */

const upstreams = useUpstreams();

const PROBLEM_JSON = 'application/problem+json; charset=utf-8';

function expectProblem(
  res: request.Response,
  status: number,
  code: string,
  source: 'search' | 'chat',
): void {
  expect(res.status, res.text).toBe(status);
  expect(res.headers['content-type']).toBe(PROBLEM_JSON);
  expect(res.body).toMatchObject({ status, code, source });
}

/** A product in the search document's minimal JSON form (section 2.2), its link on the service. */
function product(i: number): Record<string, unknown> {
  return {
    '@type': 'Product',
    name: `Desk lamp ${i}`,
    offers: {
      '@type': 'Offer',
      url: `${upstreams.search.origin}/v1/url?pid=lamp-${i}&rp=${i + 1}`,
      seller: { name: 'Lamp shop' },
      price: `${10 + (i % 90)}.00`,
      priceCurrency: 'EUR',
    },
  };
}

/** A custom:ResultList (search document 2.1) of `items` products, with extra root fields. */
function resultList(items: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    itemListElement: Array.from({ length: items }, (_, i) => product(i)),
    itemScore: Array.from({ length: items }, (_, i) => 1 - i / (items + 1)),
    queryDuration: 3,
    ...extra,
  };
}

/** `text` with `"__NESTED__"` replaced by `depth` levels of `[[[...]]]`. */
function withNesting(text: string, depth: number): string {
  return text.replace('"__NESTED__"', `${'['.repeat(depth)}${']'.repeat(depth)}`);
}

const DEEP = 100_000;
const deeplyNestedList = () =>
  withNesting(JSON.stringify(resultList(2, { debug: '__NESTED__' })), DEEP);

const searches = () => upstreams.search.requests.filter((r) => r.pathname === '/v1/search').length;

describe('an item list far longer than k', () => {
  it('when the search service sends 5,000 items for k=3, then 3 are sent, and the bytes cached are the bytes sent', async () => {
    const gw = await upstreams.gateway({ cache: 'redis' });
    upstreams.search.faults.add({
      fault: { kind: 'status', status: 200, body: JSON.stringify(resultList(5000)) },
      pathPrefix: '/v1/search',
      times: 1,
    });

    const first = await request(gw.app).get('/api/search?q=desk+lamp&k=3');
    expect(first.status, first.text).toBe(200);
    expect(first.headers['x-cache']).toBe('MISS');
    const body = first.body as { itemListElement: { name: string }[]; itemScore: number[] };
    expect(body.itemListElement.map((p) => p.name)).toEqual([
      'Desk lamp 0',
      'Desk lamp 1',
      'Desk lamp 2',
    ]);
    expect(body.itemScore).toHaveLength(3);
    expect(upstreams.search.requests.at(-1)?.url).toMatch(/[?&]k=3(&|$)/);

    // What Redis holds is exactly what was sent: the header line, then those bytes.
    await gw.loader.settled();
    const [key, ...others] = await keysUnder(gw.inspector!, `${gw.prefix}search:`);
    expect(others).toEqual([]);
    const raw = await gw.inspector!.getBuffer(key!);
    const stored = raw!.subarray(raw!.indexOf(0x0a) + 1);
    expect(stored.toString('utf8')).toBe(first.text);

    const second = await request(gw.app).get('/api/search?q=desk+lamp&k=3');
    expect(second.status).toBe(200);
    expect(second.headers['x-cache']).toBe('HIT');
    expect(second.text).toBe(first.text);
    expect(second.headers['etag']).toBe(first.headers['etag']);
    expect(searches()).toBe(1);
  });
});

describe('answers too deep or too large', () => {
  /** Above the deeply nested body (about 200 kB), so only the oversized bodies break it. */
  const MAX_BYTES = 512 * 1024;
  /** A valid result list well over MAX_BYTES, with or without a Content-Length. */
  const oversized = (chunked: boolean): Fault => ({
    kind: 'status',
    status: 200,
    body: JSON.stringify(resultList(1, { description: 'x'.repeat(4 * MAX_BYTES) })),
    ...(chunked ? { headers: { 'transfer-encoding': 'chunked' } } : {}),
  });

  const cases: [string, () => Fault, string][] = [
    [
      `JSON nested ${DEEP.toLocaleString('en')} levels deep`,
      () => ({ kind: 'status', status: 200, body: deeplyNestedList() }),
      'nested deeper than 64 levels',
    ],
    ['a body over the size cap with a Content-Length', () => oversized(false), 'oversized'],
    ['a body over the size cap, chunked', () => oversized(true), 'oversized'],
  ];

  it.each(cases)(
    'when the search service sends %s and nothing is cached, then it is 502 UPSTREAM_BAD_RESPONSE, never a 500',
    async (_name, fault, detail) => {
      const gw = await upstreams.gateway({
        env: { UPSTREAM_MAX_RESPONSE_BYTES: String(MAX_BYTES) },
      });
      upstreams.search.faults.add({ fault: fault(), pathPrefix: '/v1/search' });
      const res = await request(gw.app).get('/api/search?q=desk+lamp');
      expectProblem(res, 502, 'UPSTREAM_BAD_RESPONSE', 'search');
      expect((res.body as { detail: string }).detail).toContain(detail);
      expect(gw.logs.text()).not.toContain('Maximum call stack size exceeded');

      // Nothing of the broken answer was kept: the next call goes upstream and succeeds.
      upstreams.search.faults.clear();
      const again = await request(gw.app).get('/api/search?q=desk+lamp');
      expect(again.status).toBe(200);
      expect(again.headers['x-cache']).toBe('MISS');
    },
  );

  it.each(cases)(
    'when the search service sends %s and a stale entry exists, then the stale entry is served instead',
    async (_name, fault) => {
      const gw = await upstreams.gateway({
        env: {
          UPSTREAM_MAX_RESPONSE_BYTES: String(MAX_BYTES),
          SEARCH_CACHE_TTL_SECONDS: '0',
          SEARCH_CACHE_STALE_SECONDS: '0',
          SEARCH_CACHE_STALE_IF_ERROR_SECONDS: '60',
        },
      });
      const fresh = await request(gw.app).get('/api/search?q=desk+lamp').expect(200);
      await gw.loader.settled(); // the entry is written after the answer
      upstreams.search.faults.add({ fault: fault(), pathPrefix: '/v1/search' });

      const res = await request(gw.app).get('/api/search?q=desk+lamp');
      expect(res.status, res.text).toBe(200);
      expect(res.headers['x-cache']).toBe('STALE');
      expect(res.headers['cache-status']).toContain('fwd=stale; fwd-status=502');
      expect(res.text).toBe(fresh.text);
      expect(searches()).toBe(2);
    },
  );

  it.each([
    [
      `JSON nested ${DEEP.toLocaleString('en')} levels deep`,
      () =>
        withNesting(
          JSON.stringify({
            result: 'success',
            msg: '',
            count: 0,
            drafts: [],
            debug: '__NESTED__',
          }),
          DEEP,
        ),
    ],
    [
      'a body over the size cap',
      () =>
        JSON.stringify({
          result: 'success',
          msg: 'x'.repeat(4 * MAX_BYTES),
          count: 0,
          drafts: [],
        }),
    ],
  ])(
    'when the chat server sends %s, then it is 502 UPSTREAM_BAD_RESPONSE from chat, never a 500',
    async (_name, body) => {
      const gw = await upstreams.serviceGateway('administrator', {
        UPSTREAM_MAX_RESPONSE_BYTES: String(MAX_BYTES),
      });
      upstreams.chat.faults.add({
        fault: { kind: 'status', status: 200, body: body() },
        pathPrefix: '/api/v1/drafts',
      });
      const res = await request(gw.app).get('/api/chat/drafts');
      expectProblem(res, 502, 'UPSTREAM_BAD_RESPONSE', 'chat');
    },
  );
});

describe('Retry-After from an upstream', () => {
  const MAX = 120;
  const env = { RETRY_AFTER_MAX_SECONDS: String(MAX) };
  const tenYears = () => new Date(Date.now() + 10 * 365 * 86_400_000).toUTCString();

  /** Whole seconds within [1, MAX] (contract section 3), or no header at all. */
  function expectSaneOrAbsent(value: string | undefined): void {
    if (value === undefined) return;
    expect(value).toMatch(/^\d+$/);
    expect(Number(value)).toBeGreaterThanOrEqual(1);
    expect(Number(value)).toBeLessThanOrEqual(MAX);
  }

  // What src/resilience/retry-after.ts makes of each: unreadable or negative is 1, "try again
  // soon"; anything beyond the cap is the cap; fractions round up.
  const values: [string, () => string, number][] = [
    ['1e+308', () => '1e+308', 1],
    ['-5', () => '-5', 1],
    ['a date ten years ahead', tenYears, MAX],
    ['garbage', () => 'soon, maybe \u00e9', 1],
    ["Zulip's fractional 0.37", () => '0.37', 1],
    ['30 digits of seconds', () => '9'.repeat(30), MAX],
  ];

  interface Route {
    name: string;
    upstream: 'search' | 'chat';
    pathPrefix: string;
    path: string;
    gateway(): Promise<TestGateway>;
  }
  const routes: Route[] = [
    {
      name: 'search',
      upstream: 'search',
      pathPrefix: '/v1/search',
      path: '/api/search?q=desk+lamp',
      gateway: () => upstreams.gateway({ env }),
    },
    {
      name: 'redirect proxy',
      upstream: 'search',
      pathPrefix: '/v1/url',
      path: '/api/search/url?pid=lamp-1&rp=1',
      gateway: () => upstreams.gateway({ env }),
    },
    {
      name: 'chat drafts',
      upstream: 'chat',
      pathPrefix: '/api/v1/drafts',
      path: '/api/chat/drafts',
      gateway: () => upstreams.serviceGateway('administrator', env),
    },
  ];

  describe.each(routes)('on $name', (route) => {
    it.each(values)(
      'when the upstream answers 429 with Retry-After %s, then the 429 carries whole seconds within the cap',
      async (_name, value, expected) => {
        const gw = await route.gateway();
        upstreams[route.upstream].faults.add({
          fault: {
            kind: 'status',
            status: 429,
            headers: { 'retry-after': value() },
            ...(route.upstream === 'chat'
              ? {
                  body: JSON.stringify({
                    result: 'error',
                    msg: 'API usage exceeded rate limit',
                    code: 'RATE_LIMIT_HIT',
                  }),
                }
              : {}),
          },
          pathPrefix: route.pathPrefix,
        });
        const res = await request(gw.app).get(route.path).redirects(0);
        expectProblem(res, 429, 'RATE_LIMITED', route.upstream);
        expect(res.headers['retry-after']).toBe(String(expected));
      },
    );

    it('when the upstream answers 503 with Retry-After 1e+308, then no unsanitised value is passed on', async () => {
      const gw = await route.gateway();
      upstreams[route.upstream].faults.add({
        fault: { kind: 'status', status: 503, headers: { 'retry-after': '1e+308' } },
        pathPrefix: route.pathPrefix,
      });
      const res = await request(gw.app).get(route.path).redirects(0);
      expectProblem(res, 502, 'UPSTREAM_ERROR', route.upstream);
      expectSaneOrAbsent(res.headers['retry-after']);
    });
  });

  it.each([
    ['0.37', 0.37, 1],
    ['1e308', 1e308, MAX],
    ['-5', -5, 1],
  ])(
    "when the chat server's 429 gives retry-after %s only in its body, then the 429 carries whole seconds within the cap",
    async (_name, seconds, expected) => {
      const gw = await upstreams.serviceGateway('administrator', env);
      upstreams.chat.faults.add({
        fault: {
          kind: 'status',
          status: 429,
          // Zulip's rate-limit error (chat document, section 7), without the header.
          body: JSON.stringify({
            result: 'error',
            msg: 'API usage exceeded rate limit',
            code: 'RATE_LIMIT_HIT',
            'retry-after': seconds,
          }),
        },
        pathPrefix: '/api/v1/drafts',
      });
      const res = await request(gw.app).get('/api/chat/drafts');
      expectProblem(res, 429, 'RATE_LIMITED', 'chat');
      expect(res.headers['retry-after']).toBe(String(expected));
    },
  );
});

describe("upstream messages that echo the gateway's secrets", () => {
  const b64 = (text: string) => Buffer.from(text).toString('base64');

  function expectNowhere(gw: TestGateway, responses: request.Response[], secrets: string[]) {
    for (const res of responses) {
      const seen = `${JSON.stringify(res.headers)}\n${res.text}`;
      for (const secret of secrets) expect(seen).not.toContain(secret);
    }
    const logs = gw.logs.text();
    for (const secret of secrets) expect(logs).not.toContain(secret);
  }

  it("when the chat server's error message echoes the service key and the search token, then the message reaches the detail with both redacted, and no header or log line holds them", async () => {
    const { email, apiKey } = upstreams.chat.credentials('administrator');
    const gw = await upstreams.serviceGateway('administrator');
    const msg = `No key ${apiKey} (${encodeURIComponent(apiKey)}) accepted with token ${SEARCH_TOKEN}`;
    upstreams.chat.faults.add({
      fault: {
        kind: 'status',
        status: 400,
        body: JSON.stringify({ result: 'error', code: 'BAD_REQUEST', msg }),
      },
      pathPrefix: '/api/v1/users/',
    });
    const res = await request(gw.app).get('/api/chat/users/marie@acme.test');
    expectProblem(res, 400, 'BAD_REQUEST', 'chat');
    // The chat server's message survives (contract section 3), scrubbed.
    expect((res.body as { detail: string }).detail).toMatch(
      /^No key \[redacted\] \(\[redacted\]\) accepted with token \[redacted\]$/,
    );
    expectNowhere(gw, [res], [apiKey, SEARCH_TOKEN, b64(`${email}:${apiKey}`)]);
  });

  it('when the chat server refuses the service key and echoes it, then it is 502 and the logged cause holds no secret', async () => {
    const { email, apiKey } = upstreams.chat.credentials('administrator');
    const gw = await upstreams.serviceGateway('administrator');
    upstreams.chat.faults.add({
      fault: {
        kind: 'status',
        status: 401,
        headers: { 'www-authenticate': `Basic realm="zulip", key="${apiKey}"` },
        body: JSON.stringify({
          result: 'error',
          code: 'INVALID_API_KEY',
          msg: `Invalid API key: ${apiKey} (token ${SEARCH_TOKEN}, cursor ${CURSOR_SECRET})`,
        }),
      },
      pathPrefix: '/api/v1/drafts',
    });
    const res = await request(gw.app).get('/api/chat/drafts');
    expectProblem(res, 502, 'UPSTREAM_AUTH_FAILED', 'chat');
    expect(res.headers['www-authenticate']).toBeUndefined();
    expectNowhere(gw, [res], [apiKey, SEARCH_TOKEN, CURSOR_SECRET, b64(`${email}:${apiKey}`)]);
  });

  it('when the search service echoes its client token in bodies and headers of its errors, then no response, header or log line holds it', async () => {
    // The circuit stays closed, so every fault below reaches the simulator.
    const gw = await upstreams.gateway({ env: { BREAKER_MIN_REQUESTS: '1000' } });
    const echo = JSON.stringify({
      error: `token ${SEARCH_TOKEN} refused`,
      message: `Service-Client-Token: ${SEARCH_TOKEN}`,
    });
    const headers = { 'x-debug-token': SEARCH_TOKEN, 'www-authenticate': `Token ${SEARCH_TOKEN}` };
    const faults: Fault[] = [
      { kind: 'status', status: 400, body: echo, headers },
      { kind: 'status', status: 401, body: echo, headers },
      { kind: 'status', status: 429, body: echo, headers: { ...headers, 'retry-after': '2' } },
      { kind: 'status', status: 500, body: echo, headers },
      // A 200 that breaks the schema where the token sits in a field.
      {
        kind: 'status',
        status: 200,
        body: JSON.stringify({
          itemListElement: [{ name: SEARCH_TOKEN }],
          itemScore: [SEARCH_TOKEN],
        }),
      },
      { kind: 'status', status: 200, body: `token ${SEARCH_TOKEN} is not valid here` },
    ];
    const responses: request.Response[] = [];
    for (const [i, fault] of faults.entries()) {
      upstreams.search.faults.clear();
      upstreams.search.faults.add({ fault });
      responses.push(await request(gw.app).get(`/api/search?q=echo${i}`));
      responses.push(await request(gw.app).get(`/api/search/url?pid=echo${i}&rp=1`).redirects(0));
    }
    for (const res of responses) {
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).not.toBe(503);
    }
    expectNowhere(gw, responses, [
      SEARCH_TOKEN,
      encodeURIComponent(SEARCH_TOKEN),
      b64(SEARCH_TOKEN),
    ]);
  });
});

describe('a cache entry whose stored content type is not one the gateway writes', () => {
  it.each([
    ['a CRLF and an injected header', 'application/json\r\nX-Injected: yes', false],
    ['a CRLF, its body already held in process', 'application/json\r\nX-Injected: yes', true],
    ['text/html', 'text/html; charset=utf-8', false],
  ])(
    'when the entry in Redis carries %s, then it is a MISS answered from upstream, not a 500',
    async (_name, contentType, readFirst) => {
      const gw = await upstreams.gateway({ cache: 'redis' });
      const first = await request(gw.app).get('/api/search?q=coffee').expect(200);
      await gw.loader.settled();
      // A hit puts the body in the in-process layer: then Redis sends only the header line.
      if (readFirst) {
        const hit = await request(gw.app).get('/api/search?q=coffee').expect(200);
        expect(hit.headers['x-cache']).toBe('HIT');
      }

      const [key] = await keysUnder(gw.inspector!, `${gw.prefix}search:`);
      const raw = (await gw.inspector!.getBuffer(key!))!;
      const newline = raw.indexOf(0x0a);
      const header = JSON.parse(raw.toString('utf8', 0, newline)) as Record<string, unknown>;
      expect(header['contentType']).toBe('application/json; charset=utf-8');
      const forged = Buffer.concat([
        Buffer.from(`${JSON.stringify({ ...header, contentType })}\n`),
        raw.subarray(newline + 1),
      ]);
      await gw.inspector!.set(key!, forged, 'KEEPTTL');

      const res = await request(gw.app).get('/api/search?q=coffee');
      expect(res.status, res.text).toBe(200);
      expect(res.headers['x-cache']).toBe('MISS');
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers['x-injected']).toBeUndefined();
      // A fresh answer (its queryDuration may differ), the same results.
      expect((res.body as { itemListElement: unknown }).itemListElement).toEqual(
        (first.body as { itemListElement: unknown }).itemListElement,
      );
      expect(searches()).toBe(2);
      expect(
        gw.logs
          .lines()
          .some((l) => l['level'] === 40 && String(l['msg']).includes('corrupt cache entry')),
      ).toBe(true);

      // The miss stored a good entry again.
      await gw.loader.settled();
      const after = await request(gw.app).get('/api/search?q=coffee');
      expect(after.headers['x-cache']).toBe('HIT');
      expect(after.headers['content-type']).toBe('application/json; charset=utf-8');
    },
  );
});

/** An interval no timer of the gateway uses: only the dribble fault's timers have it. */
const DRIBBLE_MS = 37;

/**
 * Watches the timers of dribble faults, so a test can wait (on an event, not a sleep) until
 * every one was cleared: a dribble that outlived its socket would be a leaked timer.
 */
function watchDribbleTimers() {
  const realClear = globalThis.clearInterval;
  const cleared = new Set<unknown>();
  const events = new EventEmitter();
  const setSpy = vi.spyOn(globalThis, 'setInterval');
  const clearSpy = vi.spyOn(globalThis, 'clearInterval').mockImplementation((handle) => {
    realClear(handle);
    cleared.add(handle);
    events.emit('cleared');
  });
  const started = () =>
    setSpy.mock.calls.flatMap((call, i) =>
      call[1] === DRIBBLE_MS ? [setSpy.mock.results[i]?.value as unknown] : [],
    );
  return {
    started,
    /** Resolves once every dribble timer started so far is cleared; rejects after 5 s. */
    async allCleared(): Promise<void> {
      await eventually(() => started().every((handle) => cleared.has(handle)), {
        what: 'every dribble timer to be cleared once its socket closed',
        on: [[events, 'cleared']],
        timeoutMs: 5000,
      });
    },
    restore() {
      setSpy.mockRestore();
      clearSpy.mockRestore();
    },
  };
}

describe('an upstream that dribbles its answer', () => {
  let timers: ReturnType<typeof watchDribbleTimers> | undefined;
  afterEach(() => {
    timers?.restore();
    timers = undefined;
  });

  it.each([
    ['its headers to a search', 'head', '/api/search?q=desk+lamp', '/v1/search'],
    ['its body to a search', 'body', '/api/search?q=desk+lamp', '/v1/search'],
    ['its headers to the redirect proxy', 'head', '/api/search/url?pid=lamp-1&rp=1', '/v1/url'],
  ] as const)(
    'when the search service dribbles %s, then it is 504 problem+json at the deadline and the dribble stops',
    async (_name, part, path, pathPrefix) => {
      const gw = await upstreams.gateway({
        env: { SEARCH_TIMEOUT_MS: '500', SEARCH_REDIRECT_TIMEOUT_MS: '500' },
      });
      timers = watchDribbleTimers();
      upstreams.search.faults.add({
        fault: { kind: 'dribble', intervalMs: DRIBBLE_MS, part },
        pathPrefix,
      });
      const res = await request(gw.app).get(path).redirects(0);
      expectProblem(res, 504, 'UPSTREAM_TIMEOUT', 'search');
      expect((res.body as { detail: string }).detail).toBe(
        'The search service did not answer within 500 ms.',
      );
      expect(timers.started()).toHaveLength(1);
      // The gateway gave up and closed its socket: the simulator stops writing into it.
      await timers.allCleared();
    },
  );

  it('when a dribble is under way and the simulator closes, then close() resolves and the dribble stops', async () => {
    const sim = createSearchSimulator({ clientToken: SEARCH_TOKEN });
    await sim.listen();
    timers = watchDribbleTimers();
    sim.faults.add({ fault: { kind: 'dribble', intervalMs: DRIBBLE_MS } });
    const { port } = new URL(sim.origin);
    const socket = connect(Number(port), '127.0.0.1');
    socket.write(
      `GET /v1/search?q=a&k=1 HTTP/1.1\r\nHost: sim\r\nService-Client-Token: ${SEARCH_TOKEN}\r\n\r\n`,
    );
    const closed = once(socket, 'close');
    const [chunk] = (await once(socket, 'data')) as [Buffer];
    expect('HTTP/1.1 200 OK'.startsWith(chunk.toString('latin1').slice(0, 15))).toBe(true);

    await sim.close();
    await closed;
    expect(timers.started()).toHaveLength(1);
    await timers.allCleared();
  });
});

describe('a content type outside the allowlist', () => {
  it('when the search service answers 200 text/html around a valid result list, then it is 502', async () => {
    const gw = await upstreams.gateway();
    upstreams.search.faults.add({
      fault: {
        kind: 'status',
        status: 200,
        headers: { 'content-type': 'text/html; charset=utf-8' },
        body: JSON.stringify(resultList(2)),
      },
      pathPrefix: '/v1/search',
    });
    const res = await request(gw.app).get('/api/search?q=desk+lamp');
    expectProblem(res, 502, 'UPSTREAM_BAD_RESPONSE', 'search');
  });

  it('when the search service answers 200 text/html with an HTML page, then it is 502', async () => {
    const gw = await upstreams.gateway();
    upstreams.search.faults.add({ fault: { kind: 'malformed' }, pathPrefix: '/v1/search' });
    const res = await request(gw.app).get('/api/search?q=desk+lamp');
    expectProblem(res, 502, 'UPSTREAM_BAD_RESPONSE', 'search');
  });

  it('when the chat server answers 200 text/html around a valid drafts body, then it is 502', async () => {
    const gw = await upstreams.serviceGateway('administrator');
    upstreams.chat.faults.add({
      fault: {
        kind: 'status',
        status: 200,
        headers: { 'content-type': 'text/html; charset=utf-8' },
        body: JSON.stringify({ result: 'success', msg: '', count: 0, drafts: [] }),
      },
      pathPrefix: '/api/v1/drafts',
    });
    const res = await request(gw.app).get('/api/chat/drafts');
    expectProblem(res, 502, 'UPSTREAM_BAD_RESPONSE', 'chat');
  });
});

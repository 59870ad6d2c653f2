import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { APP_ORIGIN, BROWSER_HEADERS, type TestGateway } from '../helpers/test-gateway.js';
import { useUpstreams } from '../helpers/upstreams.js';
import { expectProblem } from './expect-problem.js';

/*
 * Abuse that stays within HTTP (issue 10, contract sections 1, 4 and 6): preflight floods,
 * login floods, cache and session floods, and the log lines a flood of client errors writes.
 * Forged session cookies creating no Redis counters is covered by
 * test/integration/rate-limits.test.ts and not repeated here.
 */

const upstreams = useUpstreams();

/** A GET on the gateway's real listener, with the headers exactly as given. */
function get(
  gw: TestGateway,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${gw.gateway.url}${path}`, { headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** A header's comma-separated list, lower-cased. */
const listOf = (value: string | string[] | undefined) =>
  [value ?? '']
    .flat()
    .join(',')
    .split(',')
    .map((item) => item.trim().toLowerCase())
    .filter((item) => item !== '');

/** The request's one log line, by the request id it answered with. */
function lineOf(gw: TestGateway, requestId: unknown): Record<string, unknown> {
  const line = gw.logs
    .lines()
    .find((l) => (l['req'] as { id?: unknown } | undefined)?.id === requestId);
  if (!line) throw new Error(`no log line for request ${String(requestId)}`);
  return line;
}

describe('CORS preflights', () => {
  it('when an unlisted origin sends more preflights than the rate limit, then each is a bare 204 and the client still has its whole budget', async () => {
    const gw = await upstreams.gateway({ env: { RATE_LIMIT_PER_CLIENT: '3' } });
    for (let n = 0; n < 8; n += 1) {
      const res = await request(gw.app)
        .options('/api/search?q=lamp')
        .set('Origin', 'https://evil.example.test')
        .set('Access-Control-Request-Method', 'GET')
        .set('Access-Control-Request-Headers', 'x-csrf');
      expect(res.status).toBe(204);
      const granted = Object.keys(res.headers).filter((h) => h.startsWith('access-control-'));
      expect(granted).toEqual([]);
      expect(res.headers['ratelimit']).toBeUndefined();
      expect(listOf(res.headers['vary'])).toContain('origin');
    }
    const statuses = [];
    for (let n = 0; n < 3; n += 1) {
      const res = await request(gw.app).get('/api/search?q=lamp&k=1').set('Origin', APP_ORIGIN);
      statuses.push(res.status);
      if (n === 0) expect(res.headers['ratelimit']).toMatch(/^"client";r=2;t=\d+$/);
    }
    expect(statuses).toEqual([200, 200, 200]);
    expect((await request(gw.app).get('/api/search?q=lamp&k=1')).status).toBe(429);
  });

  it('when the frontend preflights a revalidation with trace context, then it is 204 and every header the contract names is allowed or exposed', async () => {
    const gw = await upstreams.gateway();
    const preflight = await request(gw.app)
      .options('/api/search?q=lamp')
      .set('Origin', APP_ORIGIN)
      .set('Access-Control-Request-Method', 'GET')
      .set('Access-Control-Request-Headers', 'if-none-match, traceparent, tracestate');
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
    expect(preflight.headers['access-control-allow-credentials']).toBe('true');
    expect(listOf(preflight.headers['access-control-allow-headers'])).toEqual(
      expect.arrayContaining(['traceparent', 'tracestate', 'if-none-match', 'x-csrf']),
    );

    const answer = await request(gw.app).get('/api/search?q=lamp&k=1').set('Origin', APP_ORIGIN);
    expect(answer.status).toBe(200);
    expect(answer.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
    expect(listOf(answer.headers['access-control-expose-headers'])).toEqual(
      expect.arrayContaining([
        'etag',
        'cache-status',
        'x-cache',
        'x-request-id',
        'retry-after',
        'ratelimit',
        'ratelimit-policy',
      ]),
    );
  });
});

describe('Vary on search answers', () => {
  it.each<[string, Record<string, string>]>([
    ['the allowed origin', { Origin: APP_ORIGIN }],
    ['an unlisted origin', { Origin: 'https://elsewhere.example.test' }],
    ['no origin', {}],
    [
      'the allowed origin asking for LD-JSON',
      { Origin: APP_ORIGIN, Accept: 'application/ld+json' },
    ],
  ])(
    'when %s searches (miss, then hit), then Vary names Origin, Accept and Accept-Encoding, each once',
    async (_name, headers) => {
      const gw = await upstreams.gateway();
      const miss = await get(gw, '/api/search?q=lamp&k=2', headers);
      await gw.loader.settled();
      const hit = await get(gw, '/api/search?q=lamp&k=2', headers);
      expect([miss.status, hit.status]).toEqual([200, 200]);
      expect([miss.headers['x-cache'], hit.headers['x-cache']]).toEqual(['MISS', 'HIT']);
      for (const res of [miss, hit])
        expect(listOf(res.headers['vary'])).toEqual(['origin', 'accept', 'accept-encoding']);
    },
  );
});

describe('the login limit', () => {
  const login = (gw: TestGateway, password: string) =>
    request(gw.app)
      .post('/api/auth/login')
      .set(BROWSER_HEADERS)
      .send({ email: upstreams.chat.credentials('member').email, password });

  it('when a user logs in successfully more often than the login limit, then they are never locked out; as many failures are', async () => {
    const gw = await upstreams.sessionGateway({ LOGIN_RATE_LIMIT_PER_CLIENT: '3' });
    const { password } = upstreams.chat.credentials('member');
    const good = [];
    for (let n = 0; n < 6; n += 1) good.push((await login(gw, password!)).status);
    expect(good).toEqual([200, 200, 200, 200, 200, 200]);

    const bad = [];
    for (let n = 0; n < 3; n += 1) bad.push((await login(gw, 'wrong-password')).status);
    expect(bad).toEqual([401, 401, 401]);
    const locked = await login(gw, password!);
    expectProblem(locked, 429, 'RATE_LIMITED');
    expect(Number(locked.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(locked.headers['retry-after'])).toBeLessThanOrEqual(900);
    // The locked attempt never reached the chat server: 6 good and 3 bad did.
    expect(
      upstreams.chat.requests.filter((r) => r.pathname === '/api/v1/fetch_api_key'),
    ).toHaveLength(9);
  });
});

describe('in-process bounds', () => {
  it('when many distinct large searches pass through, then the in-process cache never holds more than CACHE_MAX_BYTES and keeps the most recent', async () => {
    const maxBytes = 256 * 1024;
    const gw = await upstreams.gateway({
      env: { CACHE_MAX_BYTES: String(maxBytes), SEARCH_MAX_K: '100' },
    });
    let served = 0;
    const sizes: number[] = [];
    for (let n = 0; n < 24; n += 1) {
      const res = await request(gw.app).get(`/api/search?q=lamp+variant${n}&k=100`);
      expect(res.status).toBe(200);
      expect(res.headers['x-cache']).toBe('MISS');
      served += res.text.length;
      await gw.loader.settled();
      sizes.push(gw.store.health().bytes ?? -1);
    }
    // Far more than the budget went through, and every answer was one the cache could hold.
    expect(served).toBeGreaterThan(4 * maxBytes);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(maxBytes);
    expect(Math.max(...sizes)).toBeGreaterThan(maxBytes / 2);
    const ready = await request(gw.app).get('/readyz');
    const cache = (ready.body as { checks: { cache: { backend: string; bytes: number } } }).checks
      .cache;
    expect(cache.backend).toBe('memory');
    expect(cache.bytes).toBeLessThanOrEqual(maxBytes);

    // Least recently used first: the newest is still there, the oldest is gone.
    const newest = await request(gw.app).get('/api/search?q=lamp+variant23&k=100');
    expect(newest.headers['x-cache']).toBe('HIT');
    const oldest = await request(gw.app).get('/api/search?q=lamp+variant0&k=100');
    expect(oldest.headers['x-cache']).toBe('MISS');
  });

  it('when in-process sessions reach SESSION_MEMORY_MAX, then a new login gets 503 with Retry-After and the live sessions keep working', async () => {
    const gw = await upstreams.sessionGateway({ SESSION_MEMORY_MAX: '2' });
    const ada = await upstreams.login(gw, 'owner');
    const grace = await upstreams.login(gw, 'administrator');

    const { email, password } = upstreams.chat.credentials('moderator');
    const refused = await request(gw.app)
      .post('/api/auth/login')
      .set(BROWSER_HEADERS)
      .send({ email, password });
    expectProblem(refused, 503, 'SERVICE_UNAVAILABLE');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.headers['set-cookie']).toBeUndefined();

    for (const [cookie, kind] of [
      [ada, 'owner'],
      [grace, 'administrator'],
    ] as const) {
      const res = await request(gw.app).get('/api/auth/session').set('Cookie', cookie);
      expect(res.status).toBe(200);
      expect((res.body as { user: { email: string } }).user.email).toBe(
        upstreams.chat.credentials(kind).email,
      );
    }

    // A logout makes room: the cap counts live sessions, not logins.
    await request(gw.app)
      .post('/api/auth/logout')
      .set({ ...BROWSER_HEADERS, Cookie: grace })
      .expect(204);
    await upstreams.login(gw, 'moderator');
  });
});

describe('log levels', () => {
  it.each<[string, Record<string, string>, string, number, string]>([
    ['a validation failure (400)', {}, '/api/search', 400, 'VALIDATION_FAILED'],
    ['an unknown route (404)', {}, '/api/nothing-here', 404, 'NOT_FOUND'],
    ['a refused method (405)', {}, '/api/auth/login', 405, 'METHOD_NOT_ALLOWED'],
  ])(
    'when a client causes %s, then its log line is info, names the code, and has no stack',
    async (_name, headers, path, status, code) => {
      const gw = await upstreams.gateway();
      const res = await request(gw.app).get(path).set(headers);
      expectProblem(res, status, code);
      const line = lineOf(gw, res.headers['x-request-id']);
      expect(line).toMatchObject({ level: 30, code, source: 'gateway' });
      expect(line['err']).toBeUndefined();
      expect(JSON.stringify(line)).not.toMatch(/stack|\bat .+:\d+:\d+/);
    },
  );

  it('when a client floods past its rate limit, then each 429 is logged at info without a stack', async () => {
    const gw = await upstreams.gateway({ env: { RATE_LIMIT_PER_CLIENT: '1' } });
    await request(gw.app).get('/api/search?q=lamp&k=1').expect(200);
    const limited = [];
    for (let n = 0; n < 5; n += 1)
      limited.push(await request(gw.app).get('/api/search?q=lamp&k=1'));
    for (const res of limited) {
      expectProblem(res, 429, 'RATE_LIMITED');
      const line = lineOf(gw, res.headers['x-request-id']);
      expect(line).toMatchObject({ level: 30, code: 'RATE_LIMITED' });
      expect(line['err']).toBeUndefined();
    }
    expect(gw.logs.lines().filter((l) => (l['level'] as number) >= 40 && l['req'])).toEqual([]);
  });

  it('when the search service fails with a 500, then the 502 is logged at error with its code, source and cause', async () => {
    const gw = await upstreams.gateway();
    upstreams.search.faults.add({
      fault: { kind: 'status', status: 500 },
      pathPrefix: '/v1/search',
    });
    const res = await request(gw.app).get('/api/search?q=lamp&k=1');
    expect(res.status).toBe(502);
    const body = res.body as { code: string; source: string };
    expect(body.source).toBe('search');
    const line = lineOf(gw, res.headers['x-request-id']);
    expect(line).toMatchObject({ level: 50, code: body.code, source: 'search' });
    expect(line['err']).toBeDefined();
  });
});

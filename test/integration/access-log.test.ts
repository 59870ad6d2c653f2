import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { useUpstreams } from '../helpers/upstreams.js';

/*
 * The access line (contract section 6): one per finished request, small, and with no header of
 * the request or the answer, whatever the request carried.
 */

const upstreams = useUpstreams();

type Line = Record<string, unknown>;
const lineOf = (lines: readonly Line[], id: string): Line | undefined =>
  lines.find((l) => (l['req'] as { id?: string } | undefined)?.id === id);

describe('the access line', () => {
  it('when a search misses and then hits, then each line names the request and how the cache answered, and nothing else of it', async () => {
    const gw = await upstreams.gateway();
    for (const expected of ['MISS', 'HIT']) {
      await request(gw.app)
        .get('/api/search?q=lamp&k=2')
        .set('Authorization', 'Bearer caller-secret-token')
        .set('Cookie', 'bff_session=caller-session-cookie')
        .set('X-Request-Id', `access-${expected}`)
        .expect(200);
      const line = lineOf(gw.logs.lines(), `access-${expected}`);
      expect(line).toMatchObject({ level: 30, msg: 'request completed' });
      const req = (line?.['req'] ?? {}) as Record<string, unknown>;
      expect(Object.keys(req).sort()).toEqual(['id', 'method', 'remoteAddress', 'url']);
      expect(req).toMatchObject({
        id: `access-${expected}`,
        method: 'GET',
        url: '/api/search?q=lamp&k=2',
      });
      expect(String(req['remoteAddress'])).toMatch(/127\.0\.0\.1|::1/);
      expect(line?.['res']).toEqual({ statusCode: 200, cache: expected });
      expect(typeof line?.['responseTime']).toBe('number');
      const text = JSON.stringify(line);
      expect(text).not.toContain('caller-secret-token');
      expect(text).not.toContain('caller-session-cookie');
      expect(text).not.toMatch(/"headers"/);
    }
  });

  it('when a request is refused before any route, then its line has the status and no cache field', async () => {
    const gw = await upstreams.gateway();
    await request(gw.app).get('/api/search?k=2').set('X-Request-Id', 'access-400').expect(400);
    const line = lineOf(gw.logs.lines(), 'access-400');
    expect(line?.['res']).toEqual({ statusCode: 400 });
    expect(line).toMatchObject({ code: 'VALIDATION_FAILED' });
  });

  it('when a search misses and its upstream fails, then the error handler answers with the envelope and the line carries the code and the real error', async () => {
    const gw = await upstreams.gateway({ cache: 'redis' });
    upstreams.search.faults.add({
      fault: { kind: 'status', status: 500 },
      pathPrefix: '/v1/search',
      times: 1,
    });
    const res = await request(gw.app)
      .get('/api/search?q=failing+lamp&k=2')
      .set('X-Request-Id', 'access-502');
    expect(res.status).toBe(502);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.body).toMatchObject({ code: 'UPSTREAM_ERROR', source: 'search' });
    // The rate limit's headers, as on every answer the limit let through.
    expect(res.headers['ratelimit']).toMatch(/^"client";r=\d+;t=\d+$/);
    const line = lineOf(gw.logs.lines(), 'access-502');
    expect(line).toMatchObject({ level: 50, code: 'UPSTREAM_ERROR', source: 'search' });
    expect(line?.['res']).toEqual({ statusCode: 502 });
    expect(line?.['err']).toBeDefined();
  });
});

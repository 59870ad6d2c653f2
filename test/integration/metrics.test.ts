import { connect, type Socket } from 'node:net';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { promtoolFindings, sample } from '../helpers/promtool.js';
import { openClient, parseWire } from '../helpers/raw-socket.js';
import { BROWSER_HEADERS, type TestGateway } from '../helpers/test-gateway.js';
import { useUpstreams } from '../helpers/upstreams.js';

/* GET /metrics (contract sections 1, 2 and 6): families, labels, values, exposition. */

const upstreams = useUpstreams();

async function knownMix(gw: TestGateway) {
  const app = request(gw.app);
  await app.get('/api/search?q=coffee&k=3').expect(200);
  await gw.loader.settled();
  await app.get('/api/search?q=coffee&k=3').expect(200);
  await app.get('/api/search?q=coffee&k=3').expect(200);
  await app.get('/api/search?q=coffee&k=0').expect(400);
  await app.get('/api/nowhere/marie@acme.test').expect(404);
  await app.get('/api/events?include_archived=maybe').expect(400);
  await app.get('/api/chat/channel-folders').expect(200);
  await app.get('/api/chat/users/marie%40acme.test').expect(200);
  await app.post('/api/chat/users/4/status').send({ status_text: 'x' }).expect(403);
  await app
    .post('/api/chat/users/4/status')
    .set(BROWSER_HEADERS)
    .send({ status_text: 'hi' })
    .expect(204);
}

describe('GET /metrics', () => {
  it('when a known mix of requests has been answered, then the families count it with route templates as labels, and promtool finds nothing to fault', async () => {
    const gw = await upstreams.serviceGateway('administrator', {}, 'redis');
    await knownMix(gw);
    const res = await request(gw.app).get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = res.text;
    expect(promtoolFindings(text)).toEqual([]);

    const requests = (route: string, status: string, method = 'GET') =>
      sample(text, 'http_server_request_duration_seconds_count', { method, route, status });
    expect(requests('/api/search', '200')).toBe(3);
    expect(requests('/api/search', '400')).toBe(1);
    expect(requests('unmatched', '404')).toBe(1);
    // Every route of the table has its label: the event stream's was once `unmatched`.
    expect(requests('/api/events', '400')).toBe(1);
    expect(requests('/api/chat/channel-folders', '200')).toBe(1);
    expect(requests('/api/chat/users/{email}', '200')).toBe(1);
    // A guard's refusal carries the route its path matches.
    expect(requests('/api/chat/users/{user_id}/status', '403', 'POST')).toBe(1);
    expect(requests('/api/chat/users/{user_id}/status', '204', 'POST')).toBe(1);

    const cache = (resource: string, result: string) =>
      sample(text, 'gateway_cache_requests_total', { resource, result });
    expect(cache('search', 'miss')).toBe(1);
    expect(cache('search', 'hit')).toBe(2);
    expect(cache('channel_folders', 'miss')).toBe(1);

    const upstream = (name: string, operation: string, outcome: string) =>
      sample(text, 'gateway_upstream_request_duration_seconds_count', {
        upstream: name,
        operation,
        outcome,
      });
    expect(upstream('search', 'search', 'success')).toBe(1);
    expect(upstream('chat', 'channel-folders', 'success')).toBe(1);
    expect(upstream('chat', 'user', 'success')).toBe(1);
    expect(upstream('chat', 'status', 'success')).toBe(1);

    for (const breaker of [
      'search',
      'chat',
      'redis-cache',
      'redis-sessions',
      'redis-session-writes',
      'redis-limits',
    ]) {
      expect(sample(text, 'gateway_circuit_breaker_state', { breaker })).toBe(0);
    }
    // The bulkheads' counters (contract section 7) are there before anything happened to them.
    expect(text).toMatch(/^gateway_session_writes_unreplicated_total 0$/m);
    expect(sample(text, 'gateway_cache_store_skipped_total', { reason: 'memory' })).toBe(0);
    for (const reason of ['per_client', 'full', 'draining']) {
      expect(sample(text, 'gateway_event_streams_refused_total', { reason })).toBe(0);
    }
    for (const reason of ['logout', 'rotation', 'user_limit', 'refused']) {
      expect(sample(text, 'gateway_sessions_ended_total', { reason })).toBe(0);
    }
    expect(text).toContain('process_cpu_user_seconds_total');
    expect(text).toContain('nodejs_eventloop_lag_seconds');
    // No label carries a raw path, email, query or id.
    expect(text).not.toMatch(/marie|acme|coffee|k=|\/users\/4/);
  });

  it('when an upstream fails, then the outcome says how, and an open circuit shows in the gauge', async () => {
    const gw = await upstreams.gateway({
      // The default deadline: a 500 that a loaded machine reads late must not count as a timeout.
      env: { BREAKER_MIN_REQUESTS: '2', BREAKER_FAILURE_PERCENT: '50' },
    });
    upstreams.search.faults.add({ fault: { kind: 'status', status: 500 } });
    for (const q of ['a', 'b', 'c']) await request(gw.app).get(`/api/search?q=${q}`);
    const text = (await request(gw.app).get('/metrics')).text;
    const outcome = (o: string) =>
      sample(text, 'gateway_upstream_request_duration_seconds_count', {
        upstream: 'search',
        operation: 'search',
        outcome: o,
      });
    expect(outcome('error')).toBe(2);
    expect(outcome('circuit_open')).toBe(1);
    expect(sample(text, 'gateway_circuit_breaker_state', { breaker: 'search' })).toBe(2);
  });

  it('when METRICS_TOKEN is set, then a missing or wrong token is a 401 problem with WWW-Authenticate: Bearer', async () => {
    const token = 'metrics-token-0123456789';
    const gw = await upstreams.gateway({ env: { METRICS_TOKEN: token } });
    for (const auth of [undefined, 'Bearer wrong-token-0123456789', `Basic ${token}`]) {
      const req = request(gw.app).get('/metrics');
      const res = auth ? await req.set('Authorization', auth) : await req;
      expect(res.status).toBe(401);
      expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
      expect(res.body).toMatchObject({ code: 'UNAUTHORIZED' });
    }
    const ok = await request(gw.app).get('/metrics').set('Authorization', `Bearer ${token}`);
    expect(ok.status).toBe(200);
    expect(gw.logs.text()).not.toContain(token);
  });

  it('when METRICS_TOKEN is set, then the scheme is matched case-insensitively with one or more spaces (RFC 9110 §11.1, §11.4), and a wrong token of the same length is a 401', async () => {
    const token = 'metrics-token-0123456789';
    const gw = await upstreams.gateway({ env: { METRICS_TOKEN: token } });
    for (const auth of [
      `bearer ${token}`,
      `BEARER ${token}`,
      `Bearer   ${token}`,
      `bEaReR ${token}`,
    ]) {
      const res = await request(gw.app).get('/metrics').set('Authorization', auth);
      expect(res.status, auth).toBe(200);
      expect(res.text).toContain('http_server_request_duration_seconds');
    }
    const sameLength = `${token.slice(0, -1)}x`;
    expect(sameLength).toHaveLength(token.length);
    for (const auth of [
      `Bearer ${sameLength}`,
      `bearer ${sameLength}`,
      `Bearer ${token}x`,
      `Bearer ${token.slice(0, -1)}`,
      `Bearer${token}`,
      `Bearer ${token} extra`,
      `Bearer`,
    ]) {
      const res = await request(gw.app).get('/metrics').set('Authorization', auth);
      expect(res.status, auth).toBe(401);
      expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
      expect(res.body).toMatchObject({ code: 'UNAUTHORIZED' });
    }
    expect(gw.logs.text()).not.toContain(token.slice(0, -1));
  });

  it('when METRICS=off, then there is no /metrics', async () => {
    const gw = await upstreams.gateway({ env: { METRICS: 'off' } });
    expect((await request(gw.app).get('/metrics')).status).toBe(404);
  });
});

describe('the operations port (OPS_PORT)', () => {
  it('when a request on OPS_PORT cannot be parsed, then it gets problem+json as on the public port', async () => {
    const gw = await upstreams.gateway({ env: { OPS_PORT: '0' } });
    const client = await openClient(gw.gateway.opsUrl!);
    client.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n');
    const answer = parseWire(await client.closed);
    expect(answer.status).toBe(400);
    expect(answer.headers['content-type']).toEqual(['application/problem+json; charset=utf-8']);
    expect(JSON.parse(answer.text)).toMatchObject({ code: 'BAD_REQUEST' });
  });

  it('when the public port is flooded to its connection cap, then probes and scrapes on OPS_PORT still answer, and only there', async () => {
    const gw = await upstreams.gateway({ env: { OPS_PORT: '0', MAX_CONNECTIONS: '2' } });
    const ops = gw.gateway.opsUrl!;
    expect(ops).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await request(gw.gateway.url).get('/healthz')).status).toBe(404);
    expect((await request(gw.gateway.url).get('/metrics')).status).toBe(404);
    const { port } = new URL(gw.gateway.url);
    const flood: Socket[] = await Promise.all(
      Array.from(
        { length: 6 },
        () =>
          new Promise<Socket>((resolve) => {
            const socket = connect(Number(port), '127.0.0.1', () => resolve(socket));
            socket.on('error', () => undefined);
          }),
      ),
    );
    try {
      expect((await request(ops).get('/healthz')).status).toBe(200);
      expect((await request(ops).get('/readyz')).body).toMatchObject({ status: 'ok' });
      const metrics = await request(ops).get('/metrics');
      expect(metrics.status).toBe(200);
      expect(metrics.text).toContain('http_server_request_duration_seconds');
      expect((await request(ops).get('/api/search?q=x')).status).toBe(404);
    } finally {
      for (const socket of flood) socket.destroy();
    }
  });
});

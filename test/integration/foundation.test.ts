import { Router } from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { RequestListener } from 'node:http';
import { createApp } from '../../src/composition/app.js';
import { createReadiness } from '../../src/health/readiness.js';
import { createHealthRouter } from '../../src/http/health-router.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { createRouteTemplates } from '../../src/observability/route-templates.js';
import { compileTrust } from '../../src/http/client-address.js';
import { chain, createEdge } from '../../src/http/edge.js';
import { createLogCapture } from '../helpers/log-capture.js';
import { rawRequest } from '../helpers/raw-socket.js';

/** The edge and app shell with one router that fails on purpose and one that echoes a JSON body. */
function shell() {
  const logs = createLogCapture();
  const readiness = createReadiness([{ name: 'cache', check: () => ({ status: 'ok' }) }]);
  const failing = Router();
  failing.get('/api/test/boom', () => {
    throw new Error('database password=hunter2 at /srv/internal.ts:12');
  });
  failing.post('/api/test/echo', (req, res) => {
    res.json(req.body);
  });
  const edge = createEdge({
    logger: logs.logger,
    corsOrigins: ['https://app.example.test'],
    isDraining: () => readiness.draining,
    metrics: createMetrics({ enabled: false }),
    routeOf: createRouteTemplates(['/api/test/boom', '/api/test/echo'], false),
  });
  const inner = createApp({
    ops: createHealthRouter(readiness),
    trust: compileTrust(false),
    bodyLimitBytes: 1024,
    routers: [failing],
  }) as unknown as RequestListener;
  return { app: chain([edge], inner), logs, readiness };
}

const problemType = 'application/problem+json; charset=utf-8';

describe('gateway foundation', () => {
  it('when a route is unknown, then it is a 404 envelope', async () => {
    const res = await request(shell().app).get('/api/nothing');
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toBe(problemType);
    expect(res.body).toEqual({
      type: 'urn:bff-gateway:problem:not-found',
      title: 'Not Found',
      status: 404,
      detail: 'No route for GET /api/nothing.',
      code: 'NOT_FOUND',
      source: 'gateway',
      requestId: res.headers['x-request-id'],
    });
  });

  it('when a handler throws, then it is a 500 without internals and the real error is logged', async () => {
    const { app, logs } = shell();
    const res = await request(app).get('/api/test/boom');
    expect(res.status).toBe(500);
    expect(res.body).toMatchObject({
      code: 'INTERNAL',
      detail: 'The gateway failed to handle this request.',
    });
    expect(res.text).not.toContain('hunter2');
    expect(res.text).not.toContain('internal.ts');
    const line = logs
      .lines()
      .find((l) => (l['res'] as { statusCode?: number } | undefined)?.statusCode === 500);
    expect(JSON.stringify(line?.['err'])).toContain('database password');
  });

  it('when a JSON body is too large, then it is 413', async () => {
    const res = await request(shell().app)
      .post('/api/test/echo')
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ pad: 'x'.repeat(2000) }));
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
  });

  it.each([
    ['text/plain', 'hello'],
    ['application/x-www-form-urlencoded', 'a=1'],
    ['multipart/form-data; boundary=x', '--x--'],
  ])('when a body is %s, then it is 415', async (type, body) => {
    const res = await request(shell().app)
      .post('/api/test/echo')
      .set('Content-Type', type)
      .send(body);
    expect(res.status).toBe(415);
    expect(res.body).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE', source: 'gateway' });
  });

  it('when a POST has an empty body and no Content-Type (a browser fetch without body), then it is not 415', async () => {
    const res = await rawRequest(shell().app, {
      method: 'POST',
      path: '/api/test/echo',
      headers: { 'content-length': '0' },
    });
    expect(res.status).toBe(200);
  });

  it('when a JSON body is malformed, then it is 400 MALFORMED_JSON', async () => {
    const res = await request(shell().app)
      .post('/api/test/echo')
      .set('Content-Type', 'application/json')
      .send('{"a":');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'MALFORMED_JSON' });
  });

  it('when a JSON body is valid, then it reaches the route', async () => {
    const res = await request(shell().app).post('/api/test/echo').send({ a: 1 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ a: 1 });
  });

  it.each([
    ['a well-formed id', 'abc-123_x.y:z', true],
    ['a UUID', '0b4bd7c5-31a0-4a64-a8f3-c3f2c8d1ad55', true],
    ['an id with spaces', 'abc 123', false],
    ['an id with a quote', 'abc"123', false],
    ['an over-long id', 'a'.repeat(129), false],
  ])('when X-Request-Id is %s, then it is reused: %s', async (_name, id, reused) => {
    const res = await request(shell().app).get('/api/nothing').set('X-Request-Id', id);
    if (reused) expect(res.headers['x-request-id']).toBe(id);
    else expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect((res.body as { requestId: string }).requestId).toBe(res.headers['x-request-id']);
  });

  it('when health is asked, then /healthz is 200 and /readyz is 200 until draining, then 503', async () => {
    const { app, readiness } = shell();
    await request(app).get('/healthz').expect(200, { status: 'ok' });
    await request(app)
      .get('/readyz')
      .expect(200, { status: 'ok', checks: { cache: { status: 'ok' } } });
    readiness.startDraining();
    const res = await request(app).get('/readyz');
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ status: 'draining' });
    await request(app).get('/healthz').expect(200);
    await request(app).post('/healthz').expect(405);
  });

  it('when a configured origin calls, then CORS allows it; another origin gets no CORS headers', async () => {
    const { app } = shell();
    const allowed = await request(app)
      .get('/api/nothing')
      .set('Origin', 'https://app.example.test');
    expect(allowed.headers['access-control-allow-origin']).toBe('https://app.example.test');
    const other = await request(app).get('/api/nothing').set('Origin', 'https://evil.example.test');
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('when any response is sent, then helmet headers are set and Express is not advertised', async () => {
    const res = await request(shell().app).get('/healthz');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-powered-by']).toBeUndefined();
  });

  it('when a request carries credentials, then the log line has none of them', async () => {
    const { app, logs } = shell();
    await request(app)
      .get('/api/nothing')
      .set('Authorization', 'Basic c2VjcmV0LWNhbmFyeQ==')
      .set('Cookie', 'sid=cookie-canary');
    expect(logs.text()).not.toContain('c2VjcmV0LWNhbmFyeQ');
    expect(logs.text()).not.toContain('cookie-canary');
    expect(
      logs.lines().some((l) => (l['req'] as { url?: string } | undefined)?.url === '/api/nothing'),
    ).toBe(true);
  });
});

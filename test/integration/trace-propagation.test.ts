import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { useUpstreams } from '../helpers/upstreams.js';

/*
 * Contract section 6 without an OTLP endpoint: no SDK, nothing exported, yet a valid incoming
 * traceparent still travels to every upstream call and names the trace on the log line. (With
 * an endpoint, test/fault-injection/tracing.test.ts checks the exported spans.)
 */

const upstreams = useUpstreams();

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';

describe('an incoming traceparent with no SDK loaded', () => {
  it('when a search misses, then the search service receives the traceparent and tracestate as sent', async () => {
    const gw = await upstreams.gateway();
    const res = await request(gw.app)
      .get('/api/search?q=lamp&k=2')
      .set('traceparent', TRACEPARENT)
      .set('tracestate', 'vendor=abc');
    expect(res.status).toBe(200);
    const call = upstreams.search.requests.find((r) => r.pathname === '/v1/search');
    expect(call?.headers['traceparent']).toBe(TRACEPARENT);
    expect(call?.headers['tracestate']).toBe('vendor=abc');
  });

  it('when a chat route and the redirect are called, then both upstreams receive it too', async () => {
    const gw = await upstreams.serviceGateway();
    await request(gw.app).get('/api/chat/drafts').set('traceparent', TRACEPARENT).expect(200);
    expect(upstreams.chat.requests.at(-1)?.headers['traceparent']).toBe(TRACEPARENT);
    const res = await request(gw.app)
      .get('/api/search/url?pid=prd-1&rp=2&u=https%3A%2F%2Fshop.example%2F')
      .set('traceparent', TRACEPARENT)
      .redirects(0);
    expect(res.status).toBe(302);
    expect(upstreams.search.requests.at(-1)?.headers['traceparent']).toBe(TRACEPARENT);
  });

  it('when the request is traced, then its log line carries the trace id', async () => {
    const gw = await upstreams.gateway();
    await request(gw.app).get('/api/search?q=lamp&k=2').set('traceparent', TRACEPARENT);
    const line = gw.logs.lines().find((l) => l['msg'] === 'request completed');
    expect(line?.['trace_id']).toBe(TRACE_ID);
  });

  it.each([
    ['a malformed header', 'not-a-traceparent'],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`],
    [
      'an unknown version with upper case',
      '00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01',
    ],
    ['a header-injection attempt', `${TRACEPARENT}\r\nx-evil: 1`.replace(/\r\n/, ' ')],
  ])(
    'when the traceparent is %s, then nothing of it travels and no trace id is logged',
    async (_, value) => {
      const gw = await upstreams.gateway();
      await request(gw.app)
        .get('/api/search?q=lamp&k=2')
        .set('traceparent', value)
        .set('tracestate', 'vendor=abc');
      const call = upstreams.search.requests.find((r) => r.pathname === '/v1/search');
      expect(call?.headers['traceparent']).toBeUndefined();
      expect(call?.headers['tracestate']).toBeUndefined();
      const line = gw.logs.lines().find((l) => l['msg'] === 'request completed');
      expect(line).toBeDefined();
      expect(line?.['trace_id']).toBeUndefined();
    },
  );

  it('when a redirect is followed with a malformed traceparent, then the proxy drops it', async () => {
    const gw = await upstreams.gateway();
    await request(gw.app)
      .get('/api/search/url?pid=prd-1&rp=2&u=https%3A%2F%2Fshop.example%2F')
      .set('traceparent', 'garbage')
      .redirects(0);
    expect(upstreams.search.requests.at(-1)?.headers['traceparent']).toBeUndefined();
  });
});

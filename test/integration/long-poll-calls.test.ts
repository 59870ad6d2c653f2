import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/observability/metrics.js';
import { createUpstream, type Upstream } from '../../src/upstreams/http/upstream.js';

/*
 * Contract section 6, Chat events: a long-poll that ends without an answer is no failure of the
 * chat service. The upstream module's long-poll calls bypass the breaker that ordinary calls
 * feed, against a real server that never answers.
 */

let server: Server;
let origin: string;
beforeAll(async () => {
  // Accepts every request and never answers it: a quiet long-poll, or a hung server.
  server = createServer(() => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function upstream(): Upstream {
  return createUpstream({
    source: 'chat',
    baseUrl: origin,
    connectTimeoutMs: 500,
    maxDeadlineMs: 1000,
    breaker: { failurePercent: 50, minRequests: 2, windowSeconds: 10, openSeconds: 10 },
    logger: pino({ level: 'silent' }),
    maxResponseBytes: 1024 * 1024,
    connections: 4,
    metrics: createMetrics({ enabled: false }),
  });
}

const call = (longPoll: boolean) => ({
  operation: 'events',
  method: 'GET' as const,
  path: '/api/v1/events',
  headers: {},
  requestId: 'poll',
  deadlineMs: 150,
  ...(longPoll ? { longPoll: true, signal: new AbortController().signal } : {}),
  accept: () => 'answered',
});

describe('long-poll calls and the breaker', () => {
  it('when long-polls run out without an answer, then the breaker stays closed', async () => {
    const chat = upstream();
    for (let i = 0; i < 4; i += 1) {
      await expect(chat.call(call(true))).rejects.toMatchObject({ code: 'UPSTREAM_TIMEOUT' });
    }
    expect(chat.breaker.state).toBe('closed');
    await chat.close({ force: true });
  });

  it('when ordinary calls time out the same way, then the breaker opens (the control)', async () => {
    const chat = upstream();
    for (let i = 0; i < 4; i += 1) await chat.call(call(false)).catch(() => undefined);
    expect(chat.breaker.state).toBe('open');
    await chat.close({ force: true });
  });

  it('when a long-poll is aborted by its signal (a stop), then it ends at once', async () => {
    const chat = upstream();
    const stop = new AbortController();
    const pending = chat.call({ ...call(true), deadlineMs: 60_000, signal: stop.signal });
    stop.abort();
    await expect(pending).rejects.toBeDefined();
    expect(chat.breaker.state).toBe('closed');
    await chat.close({ force: true });
  });
});

import type { IncomingMessage, ServerResponse } from 'node:http';
import pino from 'pino';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpServer, type HttpServer } from '../../src/http/http-server.js';
import { OPS_HEADERS_TIMEOUT_MS, operationsLimits } from '../../src/http/ops-limits.js';
import { eventually } from '../helpers/eventually.js';
import {
  drip,
  nextAccepted,
  openClient,
  parseResponse,
  type RawClient,
} from '../helpers/raw-socket.js';
import { useUpstreams } from '../helpers/upstreams.js';

/*
 * The operations port answers (contract v4 section 7, issue 31 row 10): connections to OPS_PORT
 * that send nothing, or send slowly, never keep /healthz, /readyz or /metrics from answering.
 * Short header timeouts free their slots in time, but a client that keeps reopening would take
 * them again; what lets a probe in is that at the cap the oldest connection without a request
 * gives way to the new one. The eviction is tried with timeouts far beyond the test's life, so
 * only it can have let the probe in; the gateway's own ops port is then flooded for real.
 */

const upstreams = useUpstreams();
const servers: HttpServer[] = [];
const clients: RawClient[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) client.socket.destroy();
  await Promise.all(
    servers.splice(0).map((s) => {
      s.destroyAll();
      return s.close();
    }),
  );
});

/** Bounds far beyond any test's life: a connection that closes was closed by the eviction. */
const PATIENT = {
  headersTimeoutMs: 60_000,
  requestTimeoutMs: 60_000,
  keepAliveTimeoutMs: 60_000,
  idleTimeoutMs: 60_000,
  responseBufferMaxBytes: 1024 * 1024,
};

/** A listener that evicts at a cap of `cap`; `/hold` answers only when released. */
async function evictingServer(cap: number) {
  const held: ServerResponse[] = [];
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    if (req.url === '/hold') held.push(res);
    else res.end('ok');
  };
  const http = createHttpServer({
    handler,
    limits: { ...PATIENT, maxConnections: cap },
    logger: pino({ level: 'silent' }),
    evictSilentAtCap: true,
  });
  servers.push(http);
  const url = await http.listen(0, '127.0.0.1');
  /** Opens a connection and waits until the server holds it (so the order is the test's). */
  const connect = async () => {
    const accepted = nextAccepted(http.server);
    const client = await openClient(url);
    clients.push(client);
    await accepted;
    return client;
  };
  return { http, url, held, connect };
}

const get = (path: string, close: boolean) =>
  `GET ${path} HTTP/1.1\r\nHost: ops.test\r\n${close ? 'Connection: close\r\n' : ''}\r\n`;

/** Sends one request on an open connection and resolves with the answer's status. */
function ask(client: RawClient, path: string): Promise<number> {
  return new Promise((resolve) => {
    client.socket.once('data', (chunk: Buffer) => resolve(parseResponse(chunk).status));
    client.socket.write(get(path, false));
  });
}

describe('a listener that evicts silent connections at its cap (evictSilentAtCap)', () => {
  it('when the cap is held by silent connections and more arrive, then the oldest silent one gives way to each newcomer, and a probe among them is answered', async () => {
    const { connect } = await evictingServer(4);
    const silent = [];
    for (let n = 0; n < 4; n += 1) silent.push(await connect());

    const fifth = await connect();
    // The server ends the oldest connection itself, having sent it nothing.
    expect((await silent[0]!.closed).length).toBe(0);
    expect(silent.slice(1).map((c) => c.socket.destroyed)).toEqual([false, false, false]);

    const probe = await connect();
    expect((await silent[1]!.closed).length).toBe(0);
    probe.socket.write(get('/healthz', true));
    expect(parseResponse(await probe.closed).status).toBe(200);
    // The newer silent connections were never touched: the probe got in by eviction alone.
    expect([silent[2], silent[3], fifth].map((c) => c!.socket.destroyed)).toEqual([
      false,
      false,
      false,
    ]);
  });

  it('when connections have sent requests, then never-used ones go first, idle keep-alive ones next, and ones with a request under way never', async () => {
    const { connect, held } = await evictingServer(4);
    const hold = async (client: RawClient) => {
      const before = held.length;
      client.socket.write(get('/hold', true));
      await eventually(() => held.length > before, { what: 'the held request to arrive' });
    };
    const idle = await connect();
    expect(await ask(idle, '/healthz')).toBe(200);
    const busy = [await connect()];
    await hold(busy[0]!);
    const silent = await connect();
    busy.push(await connect());
    await hold(busy[1]!);

    // At the cap: the never-used connection goes, though the idle keep-alive one is older…
    busy.push(await connect());
    expect((await silent.closed).length).toBe(0);
    expect(idle.socket.destroyed).toBe(false);
    await hold(busy[2]!);
    // …then the idle keep-alive one; the ones whose request is under way stay.
    await connect();
    await idle.closed;
    expect(busy.map((c) => c.socket.destroyed)).toEqual([false, false, false]);
    for (const res of held) res.end('done');
    const answers = await Promise.all(busy.map((c) => c.closed));
    expect(answers.map((raw) => parseResponse(raw).status)).toEqual([200, 200, 200]);
  });

  it('when every connection at the cap has a request under way, then the newcomer is refused and the others are answered', async () => {
    const { url, connect, held } = await evictingServer(2);
    const busy = [await connect(), await connect()];
    for (const client of busy) client.socket.write(get('/hold', true));
    await eventually(() => held.length === 2, { what: 'both held requests to arrive' });

    const refused = await openClient(url);
    clients.push(refused);
    expect((await refused.closed).length).toBe(0);
    for (const res of held) res.end('done');
    const answers = await Promise.all(busy.map((c) => c.closed));
    expect(answers.map((raw) => parseResponse(raw).status)).toEqual([200, 200]);
  });
});

describe("the operations listener's limits", () => {
  it('when the public header timeout is longer than the operations one, then the operations listener uses its own, and a shorter public one wins', () => {
    const publicLimits = { ...PATIENT, maxConnections: 10_000 };
    expect(operationsLimits(publicLimits, 64)).toMatchObject({
      maxConnections: 64,
      headersTimeoutMs: OPS_HEADERS_TIMEOUT_MS,
    });
    const tight = { ...publicLimits, headersTimeoutMs: 1000, requestTimeoutMs: 1000 };
    expect(operationsLimits(tight, 64)).toMatchObject({
      headersTimeoutMs: 1000,
      requestTimeoutMs: 1000,
    });
  });
});

describe('the gateway operations port (OPS_PORT) under a flood', () => {
  const FLOOD = 100;

  async function probesAnswer(ops: string) {
    expect((await request(ops).get('/healthz')).status).toBe(200);
    const ready = await request(ops).get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ status: 'ok' });
    const metrics = await request(ops).get('/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain('http_server_request_duration_seconds');
  }

  it(`when ${FLOOD} connections to OPS_PORT send nothing, then /healthz, /readyz and /metrics answer 200, oldest silent ones having given way`, async () => {
    const gw = await upstreams.gateway({ env: { OPS_PORT: '0' } });
    const ops = gw.gateway.opsUrl!;
    const flood = await Promise.all(Array.from({ length: FLOOD }, () => openClient(ops)));
    clients.push(...flood);

    await probesAnswer(ops);
    // More connections came than the cap holds: at least the excess was closed by the server.
    const closed = await eventually(
      () => {
        const count = flood.filter((c) => c.socket.destroyed).length;
        return count >= FLOOD - 64 && count;
      },
      { what: 'the excess silent connections to be closed' },
    );
    expect(closed).toBeGreaterThanOrEqual(FLOOD - 64);
    const evicted = await gw.logs.waitFor(
      (l) => l['msg'] === 'connection cap reached: oldest connection without a request closed',
    );
    expect(evicted['level']).toBe(40);
  });

  it(`when ${FLOOD} connections to OPS_PORT send their headers a byte at a time, then /healthz, /readyz and /metrics answer 200`, async () => {
    const gw = await upstreams.gateway({ env: { OPS_PORT: '0' } });
    const ops = gw.gateway.opsUrl!;
    const flood = await Promise.all(Array.from({ length: FLOOD }, () => openClient(ops)));
    clients.push(...flood);
    const head = `GET /healthz HTTP/1.1\r\nHost: ops.test\r\nX-Slow: ${'s'.repeat(200)}\r\n\r\n`;
    for (const client of flood) drip(client, head, 50);
    await eventually(() => flood.every((c) => c.socket.destroyed || c.socket.bytesWritten > 0), {
      what: 'every slow client to have sent a first byte',
    });

    await probesAnswer(ops);
    // None of the slow ones finished its request: none was answered 200.
    expect(flood.filter((c) => c.received().includes('HTTP/1.1 200'))).toEqual([]);
  });
});

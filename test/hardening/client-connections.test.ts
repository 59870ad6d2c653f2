import type { IncomingMessage, ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { Worker } from 'node:worker_threads';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createHttpServer } from '../../src/http/http-server.js';
import { APP_ORIGIN } from '../helpers/test-gateway.js';
import { useUpstreams } from '../helpers/upstreams.js';
import {
  drip,
  nextAccepted,
  openClient,
  parseResponse,
  whenClosed,
  type RawClient,
} from '../helpers/raw-socket.js';
import { eventually } from '../helpers/eventually.js';
import { asResponse, expectProblem } from './expect-problem.js';

/*
 * What one client may hold of the gateway (issue 10, contract sections 1, 3 and 6): its
 * connections, its slow headers and bodies, its silence, its refused bodies, its malformed
 * requests and its unread answers, each tried on a real socket against the real listener.
 * Every bound not under test is set to a minute, so a socket that closes can only have been
 * closed by the bound the test is about (and a missing bound fails by the test's timeout).
 */

const upstreams = useUpstreams();

/** Bounds far beyond any test's life, overridden one at a time below. */
const PATIENT = {
  HEADERS_TIMEOUT_MS: '60000',
  REQUEST_TIMEOUT_MS: '60000',
  KEEP_ALIVE_TIMEOUT_MS: '60000',
  CLIENT_IDLE_TIMEOUT_MS: '60000',
};

const gateway = (env: Record<string, string> = {}) =>
  upstreams.gateway({ env: { ...PATIENT, ...env } });
const serviceGateway = (env: Record<string, string> = {}) =>
  upstreams.serviceGateway('administrator', { ...PATIENT, ...env });

const get = (path: string, close = true) =>
  `GET ${path} HTTP/1.1\r\nHost: gateway.test\r\n${close ? 'Connection: close\r\n' : ''}\r\n`;

const warnings = (lines: Record<string, unknown>[], msg: string) =>
  lines.filter((l) => l['level'] === 40 && l['msg'] === msg);

describe('MAX_CONNECTIONS', () => {
  it('when a client holds every allowed connection idle and opens one more, then the extra one is closed at once and the held ones keep working', async () => {
    const gw = await gateway({ MAX_CONNECTIONS: '8' });
    const held: RawClient[] = [];
    const heldByServer: Socket[] = [];
    for (let n = 0; n < 8; n += 1) {
      const accepted = nextAccepted(gw.gateway.server);
      held.push(await openClient(gw.gateway.url));
      // The server holds it before the next one comes: the ninth is past the cap.
      heldByServer.push(await accepted);
    }

    const extra = await openClient(gw.gateway.url);
    const sentToExtra = await extra.closed;
    expect(sentToExtra.length).toBe(0);
    const drop = await gw.logs.waitFor(
      (l) => l['msg'] === 'connection cap reached: new connection closed',
    );
    expect(drop['level']).toBe(40);

    // A held connection is still served.
    held[0]!.socket.write(get('/healthz'));
    expect(parseResponse(await held[0]!.closed).status).toBe(200);
    expect(held.slice(1).every((c) => !c.socket.destroyed)).toBe(true);

    // Once the held ones are gone (the server has seen each close), a newcomer is served again.
    for (const c of held) c.socket.destroy();
    await Promise.all(heldByServer.map(whenClosed));
    const after = await openClient(gw.gateway.url);
    after.socket.write(get('/api/search?q=lamp&k=1'));
    expect(parseResponse(await after.closed).status).toBe(200);
  });
});

describe('slow and silent clients', () => {
  it('when headers arrive a byte at a time past HEADERS_TIMEOUT_MS, then the client gets a 408 problem and the socket is closed', async () => {
    const gw = await gateway({ HEADERS_TIMEOUT_MS: '1000' });
    const client = await openClient(gw.gateway.url);
    client.socket.write('GET /api/search?q=lamp HTTP/1.1\r\nHost: gateway.test\r\n');
    // Far more header bytes than could ever arrive in time: the header block never ends.
    const dripped = drip(client, `X-Slow: ${'s'.repeat(10_000)}`, 100);
    const res = parseResponse(await client.closed);
    expectProblem(asResponse(res), 408, 'REQUEST_TIMEOUT');
    expect(res.headers['connection']).toBe('close');
    expect(dripped.sent()).toBeLessThan(10_000);
    expect(upstreams.calls()).toEqual([]);
    const line = await gw.logs.waitFor((l) => l['msg'] === 'unreadable request answered');
    expect(line).toMatchObject({ level: 30, code: 'REQUEST_TIMEOUT' });
  }, 30_000);

  it('when a body arrives a byte at a time past REQUEST_TIMEOUT_MS, then the client gets a 408 problem, the socket is closed and nothing reaches the chat server', async () => {
    const gw = await serviceGateway({ HEADERS_TIMEOUT_MS: '1000', REQUEST_TIMEOUT_MS: '2000' });
    const client = await openClient(gw.gateway.url);
    const body = JSON.stringify({ status_text: 'x'.repeat(40) }).padEnd(2000, ' ');
    client.socket.write(
      [
        'POST /api/chat/users/4/status HTTP/1.1',
        'Host: gateway.test',
        `Origin: ${APP_ORIGIN}`,
        'X-CSRF: 1',
        'Content-Type: application/json',
        `Content-Length: ${body.length}`,
        '',
        '',
      ].join('\r\n'),
    );
    const dripped = drip(client, body, 100);
    const res = parseResponse(await client.closed);
    expectProblem(asResponse(res), 408, 'REQUEST_TIMEOUT');
    expect(res.headers['connection']).toBe('close');
    expect(dripped.sent()).toBeLessThan(body.length);
    expect(upstreams.chat.requests.filter((r) => r.method === 'POST')).toEqual([]);
  }, 30_000);

  it('when a client connects and never sends a byte, then the server closes the connection (any answer is a 408 problem)', async () => {
    const gw = await gateway({ HEADERS_TIMEOUT_MS: '1000' });
    const client = await openClient(gw.gateway.url);
    const raw = await client.closed;
    if (raw.length > 0) {
      const res = parseResponse(raw);
      expectProblem(asResponse(res), 408, 'REQUEST_TIMEOUT');
      expect(res.rest.length).toBe(0);
    }
  }, 30_000);

  it('when a keep-alive connection sits idle after its answer past KEEP_ALIVE_TIMEOUT_MS, then the server closes it without sending anything more', async () => {
    const gw = await gateway({ KEEP_ALIVE_TIMEOUT_MS: '1000' });
    const client = await openClient(gw.gateway.url);
    client.socket.write(get('/api/search?q=lamp&k=1', false));
    const raw = await client.closed;
    const res = parseResponse(raw);
    expect(res.status).toBe(200);
    expect(res.headers['connection']).toBe('keep-alive');
    expect(res.rest.length).toBe(0);
  }, 30_000);
});

describe('requests refused before their body is read', () => {
  const statusUpdate = (headers: string[], contentLength: number) =>
    [
      'POST /api/chat/users/4/status HTTP/1.1',
      'Host: gateway.test',
      ...headers,
      `Content-Length: ${contentLength}`,
      '',
      // The body's first byte only: the rest never comes.
      '{',
    ].join('\r\n');

  it.each<[string, string[], number, number, string]>([
    [
      'a CSRF rejection (403)',
      [`Origin: ${APP_ORIGIN}`, 'Content-Type: application/json'],
      10_000,
      403,
      'CSRF_REJECTED',
    ],
    [
      'a body over BODY_LIMIT_BYTES (413)',
      [`Origin: ${APP_ORIGIN}`, 'X-CSRF: 1', 'Content-Type: application/json'],
      100_000,
      413,
      'PAYLOAD_TOO_LARGE',
    ],
    [
      'a body that is not JSON (415)',
      [`Origin: ${APP_ORIGIN}`, 'X-CSRF: 1', 'Content-Type: text/plain'],
      10_000,
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    ],
  ])(
    'when %s comes with most of its body unsent, then the answer says Connection: close and the server closes the socket',
    async (_name, headers, contentLength, status, code) => {
      // Should the refusal wait for the body after all, the request timeout ends the wait
      // with a 408 instead, and the test says so rather than timing out.
      const gw = await serviceGateway({
        BODY_LIMIT_BYTES: '1024',
        HEADERS_TIMEOUT_MS: '5000',
        REQUEST_TIMEOUT_MS: '5000',
      });
      const accepted = nextAccepted(gw.gateway.server);
      const client = await openClient(gw.gateway.url);
      client.socket.write(statusUpdate(headers, contentLength));
      const server = await accepted;
      // The server ends the connection itself: the client never closes its side.
      await whenClosed(server);
      const res = parseResponse(await client.closed);
      const body = expectProblem(asResponse(res), status, code);
      expect(res.headers['connection']).toBe('close');
      expect(body.requestId).toBe(res.headers['x-request-id']);
      expect(upstreams.chat.requests).toEqual([]);
    },
  );
});

describe("Node's own parser errors", () => {
  it.each<[string, string, number, string]>([
    ['a garbage request line', 'GARBAGE\r\n\r\n', 400, 'BAD_REQUEST'],
    [
      'a header line without a colon',
      'GET /healthz HTTP/1.1\r\nHost gateway.test\r\n\r\n',
      400,
      'BAD_REQUEST',
    ],
    [
      'headers over the 16 KiB limit',
      `GET /api/search?q=lamp HTTP/1.1\r\nHost: gateway.test\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`,
      431,
      'HEADERS_TOO_LARGE',
    ],
  ])(
    'when a client sends %s, then it gets a problem+json answer with the whole envelope and the socket is closed',
    async (_name, bytes, status, code) => {
      const gw = await gateway();
      const client = await openClient(gw.gateway.url);
      client.socket.write(bytes);
      const res = parseResponse(await client.closed);
      const body = expectProblem(asResponse(res), status, code);
      expect(body.requestId).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.headers['connection']).toBe('close');
      expect(res.headers['content-length']).toBe(String(Buffer.byteLength(res.body)));
      expect(upstreams.calls()).toEqual([]);
      const line = await gw.logs.waitFor((l) => l['msg'] === 'unreadable request answered');
      expect(line).toMatchObject({ level: 30, code });
      expect(line['err']).toBeUndefined();
    },
  );

  it('when Node refuses a malformed request, then the problem names its requestId in X-Request-Id too (contract section 3)', async () => {
    const gw = await gateway();
    const client = await openClient(gw.gateway.url);
    client.socket.write('GARBAGE\r\n\r\n');
    const res = parseResponse(await client.closed);
    const body = expectProblem(asResponse(res), 400, 'BAD_REQUEST');
    expect(res.headers['x-request-id']).toBe(body.requestId);
  });
});

describe('clients that never read their answers', () => {
  it('when a client pipelines 100 requests on one connection and reads nothing, then at most 16 are handled and the connection is cut', async () => {
    const gw = await gateway();
    const accepted = nextAccepted(gw.gateway.server);
    const client = await openClient(gw.gateway.url, { read: false });
    const server = await accepted;
    let flood = '';
    for (let n = 0; n < 100; n += 1) flood += get(`/api/search?q=pipelined+${n}&k=1`, false);
    client.socket.write(flood);
    await whenClosed(server);
    // A later client's search has gone through once everything the flood started has.
    const later = await openClient(gw.gateway.url);
    later.socket.write(get('/api/search?q=after+the+flood&k=1'));
    expect(parseResponse(await later.closed).status).toBe(200);
    await gw.loader.settled();

    const flooded = upstreams.search.requests.filter((r) => r.url.includes('pipelined'));
    expect(flooded.length).toBeGreaterThan(0);
    expect(flooded.length).toBeLessThanOrEqual(16);
    expect(
      warnings(gw.logs.lines(), 'client does not read its answers: connection cut'),
    ).toHaveLength(1);
    client.socket.destroy();
  });

  it('when a client keeps asking for large answers one by one and never reads, then the server stops reading its requests and closes the connection', async () => {
    const gw = await gateway({
      SEARCH_MAX_K: '100',
      RESPONSE_BUFFER_MAX_BYTES: String(64 * 1024),
      CLIENT_IDLE_TIMEOUT_MS: '1000',
    });
    const accepted = nextAccepted(gw.gateway.server);
    const client = await openClient(gw.gateway.url, { read: false });
    const server = await accepted;
    const serverClosed = whenClosed(server).then(() => 'closed' as const);
    let handled = 0;
    let answerBytes = 0;
    const handledOne = () =>
      new Promise<'handled'>((resolve) => {
        const onRequest = (req: IncomingMessage, res: ServerResponse) => {
          if (req.socket !== server) return;
          gw.gateway.server.off('request', onRequest);
          handled += 1;
          res.once('finish', () => resolve('handled'));
        };
        gw.gateway.server.on('request', onRequest);
      });
    // Each answer is ~50 KB; 400 of them (20 MB) would be far beyond any socket's buffers.
    let sent = 0;
    let outcome: 'handled' | 'closed' = 'handled';
    while (outcome === 'handled' && sent < 400) {
      const next = handledOne();
      client.socket.write(get('/api/search?q=lamp&k=100', false));
      sent += 1;
      outcome = await Promise.race([next, serverClosed]);
      if (outcome === 'handled') answerBytes = server.bytesWritten;
    }
    expect(outcome).toBe('closed');
    expect(sent).toBeLessThan(400);
    expect(handled).toBeLessThan(sent);
    expect(answerBytes).toBeGreaterThan(64 * 1024);
    client.socket.destroy();
  }, 60_000);
});

describe('a stop and a connection that has not sent its request yet', () => {
  it('when a connection opened before the stop sends its first request after the listener closed, then it is answered with Connection: close, not reset', async () => {
    // A client told `Connection: close` during the drain comes back on a new connection; a stop
    // that closed every connection without a request under way reset it mid-send.
    const gw = await upstreams.gateway();
    const client = await openClient(gw.gateway.url);
    const stopped = gw.gateway.stop();
    await eventually(() => !gw.gateway.server.listening, { what: 'the listener closed' });
    client.socket.write('GET /healthz HTTP/1.1\r\nHost: gateway\r\n\r\n');
    const answer = parseResponse(await client.closed);
    expect(answer.status).toBe(200);
    expect(answer.headers['connection']).toBe('close');
    expect(await stopped).toBe(true);
  });

  it("when connections reach the kernel while the event loop is blocked through the stop's quiet wait, then they are accepted and answered, not reset", async () => {
    // A starved process wakes with its quiet-wait timer due and connections in the accept
    // queue; timers run before the loop polls for I/O, and closing the listener then would
    // reset every queued connection.
    const http = createHttpServer({
      handler: (_req, res) => res.end('ok'),
      limits: {
        maxConnections: 100,
        headersTimeoutMs: 60_000,
        requestTimeoutMs: 60_000,
        keepAliveTimeoutMs: 60_000,
        idleTimeoutMs: 60_000,
        responseBufferMaxBytes: 1 << 20,
      },
      logger: pino({ level: 'silent' }),
    });
    const url = await http.listen(0, '127.0.0.1');
    // The clients live on a thread of their own, so their handshakes complete (the kernel puts
    // them in the accept queue) while this thread, the gateway's, is blocked.
    const count = 8;
    const connected = new Int32Array(new SharedArrayBuffer(4));
    const clients = new Worker(CLIENTS_THREAD, {
      eval: true,
      workerData: { port: Number(new URL(url).port), count, connected },
    });
    try {
      http.beginStop();
      const closed = http.close();
      // Blocked until every handshake is done, then past the stop's 50 ms quiet wait.
      expect(Atomics.wait(connected, 0, 0, 10_000)).not.toBe('timed-out');
      const blockedUntil = performance.now() + 120;
      while (performance.now() < blockedUntil);
      const answered = once(clients, 'message');
      clients.postMessage('send');
      const [heads] = (await answered) as [string[]];
      expect(heads.map((head) => /^HTTP\/1\.1 (\d{3})/.exec(head)?.[1])).toEqual(
        heads.map(() => '200'),
      );
      expect(heads).toHaveLength(count);
      await closed;
      expect(http.server.listening).toBe(false);
    } finally {
      await clients.terminate();
    }
  });
});

/**
 * Opens `count` connections to `port` and says so through `connected` (a shared Int32Array,
 * for a thread that is blocked); on a message sends one request on each and posts back what
 * each received before it closed.
 */
const CLIENTS_THREAD = `
const { connect } = require('node:net');
const { parentPort, workerData } = require('node:worker_threads');
const { port, count, connected } = workerData;
let open = 0;
const sockets = Array.from({ length: count }, () =>
  connect(port, '127.0.0.1', () => {
    open += 1;
    if (open === count) {
      Atomics.store(connected, 0, 1);
      Atomics.notify(connected, 0);
    }
  }),
);
parentPort.once('message', () => {
  const heads = [];
  for (const socket of sockets) {
    let received = '';
    socket.on('data', (chunk) => (received += chunk));
    socket.on('error', () => undefined); // a reset shows as a connection that received nothing
    socket.on('close', () => {
      heads.push(received);
      if (heads.length === count) parentPort.postMessage(heads);
    });
    socket.write('GET / HTTP/1.1\\r\\nHost: gateway\\r\\n\\r\\n');
  }
});
`;

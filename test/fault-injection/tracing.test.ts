import { EventEmitter, once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { startGatewayProcess, useChaosEnvironment, type GatewayProcess } from './harness.js';

/*
 * Tracing as an operator turns it on (contract section 6): the production build with an OTLP
 * endpoint pointing at a real HTTP receiver in this test. One traced request's spans, the
 * traceparent the simulator received, and the trace id on the log line.
 */

const env = useChaosEnvironment();

interface Export {
  contentType: string;
  body: Buffer;
}

/** An OTLP/HTTP receiver: records every export and answers as a collector does. */
async function startReceiver() {
  const exports: Export[] = [];
  const exported = new EventEmitter();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.url === '/v1/traces' && req.method === 'POST') {
        exports.push({
          contentType: req.headers['content-type'] ?? '',
          body: Buffer.concat(chunks),
        });
        exported.emit('export');
      }
      res.writeHead(200, { 'content-type': req.headers['content-type'] ?? 'application/json' });
      res.end(req.headers['content-type']?.includes('json') ? '{}' : '');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports,
    /** Resolves once `done` holds for what has arrived, re-checked on each export. */
    until(done: () => boolean, ms = 15_000) {
      return eventually(done, {
        what: 'the spans expected among the exports received',
        on: [[exported, 'export']],
        timeoutMs: ms,
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: { stringValue?: string; intValue?: string } }[];
}

/** Every span of the JSON exports (OTLP/JSON encodes ids as hex). */
function spansOf(exports: readonly Export[]): Span[] {
  return exports.flatMap((e) => {
    const body = JSON.parse(e.body.toString('utf8')) as {
      resourceSpans: { scopeSpans: { spans: Span[] }[] }[];
    };
    return body.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
  });
}

const attribute = (span: Span, key: string) =>
  span.attributes.find((a) => a.key === key)?.value.stringValue;

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${CLIENT_SPAN}-01`;

describe('tracing with an OTLP endpoint', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let gw: GatewayProcess;

  beforeAll(async () => {
    receiver = await startReceiver();
    gw = await startGatewayProcess({
      upstreams: env().endpoints,
      redisUrl: env().redis.url,
      env: {
        LOG_LEVEL: 'info',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.origin,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: 'bff-under-test',
        OTEL_BSP_SCHEDULE_DELAY: '100',
      },
    });
  });
  afterAll(async () => {
    await gw?.dispose();
    await receiver?.close();
  });

  it('when a request carries a traceparent, then its trace continues through the gateway, the upstream call and Redis, and its log line names the trace', async () => {
    env().reset();
    const res = await fetch(`${gw.url}/api/search?q=desk+lamp&k=3`, {
      headers: { traceparent: TRACEPARENT },
    });
    expect(res.status).toBe(200);

    // The simulator got the trace, with the gateway's own client span as the parent.
    const call = env().search.requests.find((r) => r.pathname === '/v1/search');
    const sent = String(call?.headers['traceparent']);
    expect(sent).toMatch(new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-01$`));
    expect(sent).not.toContain(CLIENT_SPAN);

    await receiver.until(() => {
      const spans = spansOf(receiver.exports).filter((s) => s.traceId === TRACE_ID);
      return spans.some((s) => s.kind === 2) && spans.some((s) => s.kind === 3);
    });
    const spans = spansOf(receiver.exports).filter((s) => s.traceId === TRACE_ID);
    const server = spans.find((s) => s.kind === 2)!;
    expect(server.name).toBe('GET /api/search');
    expect(server.parentSpanId).toBe(CLIENT_SPAN);
    expect(attribute(server, 'http.route')).toBe('/api/search');
    const upstream = spans.find((s) => s.kind === 3 && sent.includes(s.spanId));
    expect(upstream, 'the client span whose id the simulator received').toBeDefined();
    const redis = spans.filter((s) => attribute(s, 'db.system.name') === 'redis');
    expect(redis.length).toBeGreaterThan(0);
    expect(redis.every((s) => s.parentSpanId !== undefined)).toBe(true);
    // No query, email or token on any span: the statement is the command name alone.
    for (const span of spans) {
      expect(JSON.stringify(span)).not.toContain(env().endpoints.searchToken);
    }
    const line = gw
      .output()
      .split('\n')
      .find((l) => l.includes('"url":"/api/search?q=desk+lamp&k=3"'));
    expect(line).toContain(`"trace_id":"${TRACE_ID}"`);
  });

  it('when the answer is a cache hit, then its span is still named after its route', async () => {
    const traceId = 'a'.repeat(31) + '1';
    const res = await fetch(`${gw.url}/api/search?q=desk+lamp&k=3`, {
      headers: { traceparent: `00-${traceId}-${CLIENT_SPAN}-01` },
    });
    expect(res.headers.get('x-cache')).toBe('HIT');
    await receiver.until(() =>
      spansOf(receiver.exports).some((s) => s.traceId === traceId && s.kind === 2),
    );
    const server = spansOf(receiver.exports).find((s) => s.traceId === traceId && s.kind === 2)!;
    expect(server.name).toBe('GET /api/search');
  });

  it('when a request has no traceparent, then a new trace starts and the service name is the configured one', async () => {
    const before = receiver.exports.length;
    const res = await fetch(`${gw.url}/api/chat/channel-folders`);
    expect(res.status).toBe(200);
    await receiver.until(() =>
      spansOf(receiver.exports.slice(before)).some(
        (s) => s.name === 'GET /api/chat/channel-folders',
      ),
    );
    const body = JSON.parse(receiver.exports.at(-1)!.body.toString('utf8')) as {
      resourceSpans: { resource: { attributes: Span['attributes'] } }[];
    };
    const name = body.resourceSpans[0]!.resource.attributes.find((a) => a.key === 'service.name');
    expect(name?.value.stringValue).toBe('bff-under-test');
  });
});

describe('tracing over the default protocol', () => {
  it('when no protocol is set, then spans go as OTLP protobuf', async () => {
    const receiver = await startReceiver();
    const gw = await startGatewayProcess({
      upstreams: env().endpoints,
      redisUrl: env().redis.url,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.origin, OTEL_BSP_SCHEDULE_DELAY: '100' },
    });
    try {
      const traceId = 'b'.repeat(31) + '2';
      await fetch(`${gw.url}/api/search?q=kettle`, {
        headers: { traceparent: `00-${traceId}-${CLIENT_SPAN}-01` },
      });
      const raw = Buffer.from(traceId, 'hex');
      const serverSpan = Buffer.from('GET /api/search');
      // The server span ends after its children (the upstream call, Redis), and a loaded
      // machine may export them in an earlier batch: wait for the batch that holds it.
      const holdsServerSpan = (e: { body: Buffer }) =>
        e.body.includes(raw) && e.body.includes(serverSpan);
      await receiver.until(() => receiver.exports.some(holdsServerSpan));
      const exports = receiver.exports.filter((e) => e.body.includes(raw));
      expect(exports.map((e) => e.contentType)).toEqual(
        exports.map(() => 'application/x-protobuf'),
      );
    } finally {
      await gw.dispose();
      await receiver.close();
    }
  });
});

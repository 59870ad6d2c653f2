import { createServer, type IncomingHttpHeaders, type RequestListener } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { useUpstreams as useSharedUpstreams, type Upstreams } from '../helpers/upstreams.js';

/** A response as it came off the socket: the head is kept raw so injected lines are visible. */
export interface WireResponse {
  status: number;
  /** The status line and header lines, exactly as sent, without the blank line. */
  head: string;
  /** Header lines parsed naively: lower-cased name → every value seen. */
  headers: Record<string, string[]>;
  body: Buffer;
  text: string;
}

/**
 * Writes `bytes` to a fresh server running `app` and reads until the server closes. Unlike
 * supertest (which re-encodes URLs and serialises Buffers as JSON) or node:http (which refuses
 * CR/LF in header values), nothing here touches the request: it is the attacker's own bytes.
 */
export async function sendWire(
  app: RequestListener,
  bytes: string | Buffer,
): Promise<WireResponse> {
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  try {
    const raw = await new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      // No half-close: node's server aborts a request in flight when the client ends its side.
      const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.on('end', () => {
        socket.end();
        resolve(Buffer.concat(chunks));
      });
      socket.on('error', reject);
      socket.setTimeout(10_000, () => socket.destroy(new Error('no answer within 10 s')));
    });
    return parseResponse(raw);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** One HTTP/1.1 request with `Connection: close`; header lines are joined as given. */
export function wireRequest(options: {
  method: string;
  target: string;
  headers: readonly (readonly [string, string])[];
  body?: Buffer | string;
  /** Send the body as one chunk with `Transfer-Encoding: chunked` instead of Content-Length. */
  chunked?: boolean;
}): Buffer {
  const content =
    options.body === undefined
      ? Buffer.alloc(0)
      : Buffer.isBuffer(options.body)
        ? options.body
        : Buffer.from(options.body, 'utf8');
  const framing =
    options.body === undefined
      ? []
      : options.chunked === true
        ? ['Transfer-Encoding: chunked']
        : [`Content-Length: ${content.length}`];
  const body =
    options.chunked === true
      ? Buffer.concat([
          Buffer.from(`${content.length.toString(16)}\r\n`),
          content,
          Buffer.from('\r\n0\r\n\r\n'),
        ])
      : content;
  const lines = [
    `${options.method} ${options.target} HTTP/1.1`,
    'Host: gateway.test',
    'Connection: close',
    ...options.headers.map(([name, value]) => `${name}: ${value}`),
    ...framing,
  ];
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), body]);
}

function parseResponse(raw: Buffer): WireResponse {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.subarray(0, split === -1 ? raw.length : split).toString('latin1');
  let body = split === -1 ? Buffer.alloc(0) : raw.subarray(split + 4);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string[]> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    (headers[name] ??= []).push(line.slice(colon + 1).trim());
  }
  if (headers['transfer-encoding']?.includes('chunked')) body = dechunk(body);
  return {
    status: Number(statusLine.split(' ')[1]),
    head,
    headers,
    body,
    text: body.toString('utf8'),
  };
}

function dechunk(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = body.indexOf('\r\n', at);
    if (eol === -1) break;
    const size = Number.parseInt(body.subarray(at, eol).toString('latin1'), 16);
    if (!Number.isFinite(size) || size === 0) break;
    parts.push(body.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

/**
 * Wraps the app so that it sees these request header values, as if a lenient front proxy had
 * let them through: node's own parser would never hand CR or LF inside a value to the app.
 */
export function withRequestHeaders(
  app: RequestListener,
  overrides: IncomingHttpHeaders,
): RequestListener {
  return (req, res) => {
    Object.assign(req.headers, overrides);
    app(req, res);
  };
}

/** What the assertions below need of a supertest, rawRequest or sendWire response. */
export interface AnyResponse {
  status: number;
  headers: Record<string, unknown>;
  text?: unknown;
  body?: unknown;
}

/** One header as a string, whichever client produced the response. */
export function headerOf(res: AnyResponse, name: string): string | undefined {
  const value = res.headers[name.toLowerCase()];
  if (Array.isArray(value)) return value.join(', ');
  return typeof value === 'string' ? value : undefined;
}

export function textOf(res: AnyResponse): string {
  if (typeof res.text === 'string') return res.text;
  if (typeof res.body === 'string') return res.body;
  if (Buffer.isBuffer(res.body)) return res.body.toString('utf8');
  return '';
}

export type ProblemSource = 'gateway' | 'chat' | 'search';

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  source: ProblemSource;
  requestId: string;
  errors?: { path: string; message: string }[];
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  502: 'Bad Gateway',
};

/**
 * Asserts the exact status and the whole RFC 9457 envelope: type, title, status, code (one
 * code, or any of a few where the contract leaves the choice open), source, and a requestId
 * equal to the X-Request-Id header. Returns the body for further checks.
 */
export function expectProblem(
  res: AnyResponse,
  status: number,
  code: string | readonly string[],
  source: ProblemSource = 'gateway',
): ProblemBody {
  expect(res.status, textOf(res).slice(0, 300)).toBe(status);
  expect(headerOf(res, 'content-type')).toBe('application/problem+json; charset=utf-8');
  const body = JSON.parse(textOf(res)) as ProblemBody;
  const codes = typeof code === 'string' ? [code] : code;
  expect(codes).toContain(body.code);
  expect(body).toMatchObject({
    type: `urn:bff-gateway:problem:${body.code.toLowerCase().replaceAll('_', '-')}`,
    title: TITLES[status],
    status,
    source,
    requestId: headerOf(res, 'x-request-id'),
  });
  expect(typeof body.detail).toBe('string');
  return body;
}

/** The `path`s of a VALIDATION_FAILED envelope's errors. */
export const errorPaths = (body: ProblemBody) => (body.errors ?? []).map((e) => e.path);

/** Object.prototype's own keys, to compare before and after hostile keys went through. */
export const prototypeKeys = () => Object.getOwnPropertyNames(Object.prototype).sort();

/** Nothing reached Object.prototype: no `x`, no new keys. */
export function expectNoPollution(before: readonly string[]): void {
  const probe = {} as Record<string, unknown>;
  expect(probe['x']).toBeUndefined();
  expect(probe['admin']).toBeUndefined();
  expect(prototypeKeys()).toEqual(before);
}

/** The shared simulator fixture, with deadlines short enough for fault cases. */
export const useUpstreams = () =>
  useSharedUpstreams({ env: { CHAT_TIMEOUT_MS: '2000', SEARCH_TIMEOUT_MS: '2000' } });
export type { Upstreams };

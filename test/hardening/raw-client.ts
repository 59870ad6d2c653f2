import type { Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { expect } from 'vitest';

/**
 * A client on a bare TCP socket, for the cases no HTTP client will produce: requests sent a
 * byte at a time, pipelined floods, connections that never send or never read. What the
 * server sends is kept whole; `closed` resolves on the socket's 'close' event, whichever side
 * ended it, so tests wait on events and never on the clock.
 */
export interface RawClient {
  readonly socket: Socket;
  /** Every byte the server has sent so far (nothing when opened with `read: false`). */
  received(): Buffer;
  /** Resolves with everything received once the socket is closed. */
  readonly closed: Promise<Buffer>;
  /** Resolves when the first bytes of an answer arrive. */
  readonly answered: Promise<void>;
}

/**
 * Connects to `url` (a gateway's real listener). With `read: false` the client never reads:
 * the socket stays paused, as a client that does not consume its answers would.
 */
export async function openClient(
  url: string,
  options: { read?: boolean } = {},
): Promise<RawClient> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  const chunks: Buffer[] = [];
  // A server that cuts a connection may reset it; the outcome is judged by 'close'.
  socket.on('error', () => undefined);
  const closed = new Promise<Buffer>((resolve) =>
    socket.once('close', () => resolve(Buffer.concat(chunks))),
  );
  const reading = options.read !== false;
  // A 'data' listener would start the flow of a client that must never read.
  const answered = reading
    ? new Promise<void>((resolve) => socket.once('data', () => resolve()))
    : new Promise<void>(() => undefined);
  if (reading) socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  else socket.pause();
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return { socket, received: () => Buffer.concat(chunks), closed, answered };
}

/** The server-side socket of the next connection `server` accepts. */
export function nextAccepted(server: Server): Promise<Socket> {
  return new Promise((resolve) => server.once('connection', resolve));
}

/** Resolves once a socket (either side's) is closed. */
export function whenClosed(socket: Socket): Promise<void> {
  return new Promise((resolve) => {
    if (socket.closed) resolve();
    else socket.once('close', () => resolve());
  });
}

/** Writes `text` one byte per `everyMs` until the socket closes or an answer begins. */
export function drip(client: RawClient, text: string, everyMs: number): { sent(): number } {
  let at = 0;
  const timer = setInterval(() => {
    if (at >= text.length || client.socket.destroyed) {
      clearInterval(timer);
      return;
    }
    client.socket.write(text[at]!);
    at += 1;
  }, everyMs);
  const stop = () => clearInterval(timer);
  client.socket.once('close', stop);
  void client.answered.then(stop);
  return { sent: () => at };
}

export interface ParsedResponse {
  status: number;
  /** Lower-cased names; repeated headers joined with ', '. */
  headers: Record<string, string>;
  body: string;
  /** The bytes after this response (a pipelined next answer, or anything unexpected). */
  rest: Buffer;
}

/** The first HTTP/1.1 response in `raw` (bodies framed by Content-Length, as the gateway's are). */
export function parseResponse(raw: Buffer): ParsedResponse {
  const split = raw.indexOf('\r\n\r\n');
  if (split === -1)
    throw new Error(
      `no complete response head in ${JSON.stringify(raw.toString('latin1').slice(0, 200))}`,
    );
  const [statusLine = '', ...lines] = raw.subarray(0, split).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  const length = Number(headers['content-length'] ?? 0);
  const start = split + 4;
  return {
    status: Number(statusLine.split(' ')[1]),
    headers,
    body: raw.subarray(start, start + length).toString('utf8'),
    rest: raw.subarray(start + length),
  };
}

/** Titles of RFC 9110 for the statuses these tests meet (kept apart from the gateway's table). */
const TITLES: Record<number, string> = {
  400: 'Bad Request',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  source: string;
  requestId: string;
}

/** The contract's envelope (section 3): problem+json with every field, from the gateway. */
export function expectProblem(
  res: { status: number; headers: Record<string, unknown>; text: string },
  status: number,
  code: string,
): Problem {
  expect(res.status, res.text.slice(0, 300)).toBe(status);
  expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  const body = JSON.parse(res.text) as Problem;
  expect(body).toMatchObject({
    type: `urn:bff-gateway:problem:${code.toLowerCase().replaceAll('_', '-')}`,
    title: TITLES[status],
    status,
    code,
    source: 'gateway',
  });
  expect(typeof body.detail).toBe('string');
  expect(body.detail.length).toBeGreaterThan(0);
  expect(typeof body.requestId).toBe('string');
  expect(body.requestId.length).toBeGreaterThan(0);
  return body;
}

/** A parsed raw response in the shape expectProblem takes. */
export const asResponse = (res: ParsedResponse) => ({
  status: res.status,
  headers: res.headers,
  text: res.body,
});

import {
  createServer,
  request,
  type IncomingHttpHeaders,
  type RequestListener,
  type Server,
} from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';

/*
 * Clients below the HTTP clients, for what supertest, fetch and node:http will not send: bytes
 * exactly as an attacker writes them, requests a byte at a time, pipelined floods, connections
 * that never send or never read. One socket client (openClient), one way to read a response
 * head, and three ways in: a socket on a real listener (openClient), raw bytes to an app
 * (sendWire) and a request target kept byte for byte (rawRequest). Tests wait on the socket's
 * events, never on the clock.
 */

// ---------------------------------------------------------------------------------------------
// The socket client
// ---------------------------------------------------------------------------------------------

/**
 * A client on a bare TCP socket. What the server sends is kept whole; `closed` resolves on the
 * socket's 'close' event, whichever side ended it.
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
 * Connects to `url` (a real listener's `http://host:port`); rejects if the connection fails.
 * With `read: false` the client never reads: the socket stays paused, as a client that does not
 * consume its answers would.
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

/**
 * Runs `app` on a fresh loopback listener for the length of `use`, then closes it and every
 * connection it still has.
 */
async function withListener<T>(app: RequestListener, use: (url: string) => Promise<T>): Promise<T> {
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  try {
    return await use(`http://127.0.0.1:${port}`);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

// ---------------------------------------------------------------------------------------------
// Reading what came back
// ---------------------------------------------------------------------------------------------

interface Head {
  status: number;
  /** The status line and header lines, exactly as sent, without the blank line. */
  head: string;
  /** Header lines: lower-cased name → every value seen, in order. */
  lists: Record<string, string[]>;
  /** Where the body starts in the raw bytes (the end when the head never completed). */
  bodyAt: number;
}

/** The head of the first response in `raw`; `complete` says whether its blank line came. */
function readHead(raw: Buffer): Head & { complete: boolean } {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.subarray(0, split === -1 ? raw.length : split).toString('latin1');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const lists: Record<string, string[]> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    (lists[name] ??= []).push(line.slice(colon + 1).trim());
  }
  return {
    status: Number(statusLine.split(' ')[1]),
    head,
    lists,
    bodyAt: split === -1 ? raw.length : split + 4,
    complete: split !== -1,
  };
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
  const head = readHead(raw);
  if (!head.complete)
    throw new Error(
      `no complete response head in ${JSON.stringify(raw.toString('latin1').slice(0, 200))}`,
    );
  const headers: Record<string, string> = {};
  for (const [name, values] of Object.entries(head.lists)) headers[name] = values.join(', ');
  const length = Number(headers['content-length'] ?? 0);
  const start = head.bodyAt;
  return {
    status: head.status,
    headers,
    body: raw.subarray(start, start + length).toString('utf8'),
    rest: raw.subarray(start + length),
  };
}

/** A response as it came off the socket: the head is kept raw so injected lines are visible. */
export interface WireResponse {
  status: number;
  /** The status line and header lines, exactly as sent, without the blank line. */
  head: string;
  /** Header lines parsed naively: lower-cased name → every value seen. */
  headers: Record<string, string[]>;
  /** Everything after the head until the server closed (de-chunked when chunked). */
  body: Buffer;
  text: string;
}

/** The whole of what a server sent before it closed, read as one response. */
export function parseWire(raw: Buffer): WireResponse {
  const { status, head, lists, bodyAt } = readHead(raw);
  let body = raw.subarray(bodyAt);
  if (lists['transfer-encoding']?.includes('chunked')) body = dechunk(body);
  return { status, head, headers: lists, body, text: body.toString('utf8') };
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

// ---------------------------------------------------------------------------------------------
// Raw bytes to an app
// ---------------------------------------------------------------------------------------------

/**
 * Writes `bytes` to a fresh server running `app` and reads until the server closes. Unlike
 * supertest (which re-encodes URLs and serialises Buffers as JSON) or node:http (which refuses
 * CR/LF in header values), nothing here touches the request: it is the attacker's own bytes.
 * A socket error (a reset) rejects; so does a server silent for 10 s.
 */
export function sendWire(app: RequestListener, bytes: string | Buffer): Promise<WireResponse> {
  return withListener(app, async (url) => {
    const client = await openClient(url);
    const failed = new Promise<never>((_, reject) => client.socket.once('error', reject));
    failed.catch(() => undefined);
    client.socket.setTimeout(10_000, () =>
      client.socket.destroy(new Error('no answer within 10 s')),
    );
    // No half-close: node's server aborts a request in flight when the client ends its side.
    client.socket.write(bytes);
    return parseWire(await Promise.race([client.closed, failed]));
  });
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

// ---------------------------------------------------------------------------------------------
// A request target kept byte for byte
// ---------------------------------------------------------------------------------------------

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** The body exactly as it came off the wire, content coding and all. */
  bytes: Buffer;
}

/**
 * One request whose request target goes on the wire exactly as given. supertest (like fetch)
 * builds URLs with WHATWG URL, which re-escapes bytes such as `'`; byte-for-byte tests need this.
 * node:http still frames it, so headers and body are well-formed.
 */
export function rawRequest(
  app: RequestListener,
  options: { method?: string; path: string; headers?: Record<string, string>; body?: string },
): Promise<RawResponse> {
  return withListener(app, (url) => {
    const { hostname, port } = new URL(url);
    return new Promise<RawResponse>((resolve, reject) => {
      const req = request(
        {
          host: hostname,
          port: Number(port),
          method: options.method ?? 'GET',
          path: options.path,
          headers: options.headers,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const bytes = Buffer.concat(chunks);
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: bytes.toString('utf8'),
              bytes,
            });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(options.body);
    });
  });
}

import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { applyFault, FaultPlan } from './sim-faults.js';

/** What a simulator saw of one request, for tests to assert on. */
export interface RecordedRequest {
  method: string;
  /** The raw request target: path and query exactly as received. */
  url: string;
  pathname: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export type SimHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  recorded: RecordedRequest,
) => void | Promise<void>;

export interface SimServer {
  readonly server: Server;
  readonly requests: RecordedRequest[];
  readonly faults: FaultPlan;
  /**
   * Resolves with the first request, already recorded or still to come, that `match` accepts:
   * tests wait on the simulator seeing a call instead of sleeping for it.
   */
  received(match?: (request: RecordedRequest) => boolean): Promise<RecordedRequest>;
  /** Listens on 127.0.0.1 (port 0 by default) and resolves to the base origin. */
  listen(port?: number, host?: string): Promise<string>;
  /** The origin it listens on; throws before listen(). */
  readonly origin: string;
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 1024 * 1024;

/** Builds an HTTP server that records every request and applies switchable faults first. */
export function createSimServer(handler: SimHandler): SimServer {
  const requests: RecordedRequest[] = [];
  const faults = new FaultPlan();
  // One listener per pending `received()`: a test may wait for many requests at once (24 in
  // the graceful-stop scenario), each removed when its request arrives.
  const arrivals = new EventEmitter().setMaxListeners(0);
  const sockets = new Set<Socket>();
  let origin: string | undefined;

  const server = createServer((req, res) => {
    void handle(req, res);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        res.writeHead(413).end();
        return;
      }
      chunks.push(chunk);
    }
    const url = req.url ?? '/';
    const recorded: RecordedRequest = {
      method: req.method ?? 'GET',
      url,
      pathname: url.split('?')[0] ?? '/',
      headers: req.headers,
      body: Buffer.concat(chunks).toString('utf8'),
    };
    requests.push(recorded);
    arrivals.emit('request', recorded);
    try {
      const fault = faults.take(recorded.pathname);
      if (fault && (await applyFault(fault, req, res))) return;
      await handler(req, res, recorded);
    } catch {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'simulator failure' }));
    }
  }

  return {
    server,
    requests,
    faults,
    received(match = () => true) {
      const seen = requests.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => {
        const arrived = (recorded: RecordedRequest) => {
          if (!match(recorded)) return;
          arrivals.off('request', arrived);
          resolve(recorded);
        };
        arrivals.on('request', arrived);
      });
    },
    get origin() {
      if (origin === undefined) throw new Error('simulator is not listening');
      return origin;
    },
    listen(port = 0, host = '127.0.0.1') {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          const address = server.address() as AddressInfo;
          origin = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
          resolve(origin);
        });
      });
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** Sends a JSON body with an exact Content-Length. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  contentType = 'application/json',
): void {
  sendJsonText(res, status, JSON.stringify(body), contentType);
}

/** A JSON body already serialised. */
export function sendJsonText(
  res: ServerResponse,
  status: number,
  json: string,
  contentType = 'application/json',
): void {
  // Encoded once: a length from the string and a write of it would each walk it again.
  const bytes = Buffer.from(json);
  res.writeHead(status, { 'content-type': contentType, 'content-length': bytes.length });
  res.end(bytes);
}

import { performance } from 'node:perf_hooks';
import { setImmediate as afterPoll, setTimeout as sleep } from 'node:timers/promises';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from 'pino';
import { createLogThrottle, type LogThrottle } from '../logging/log-throttle.js';
import { answerClientErrors, answerMissingHost, lacksHost } from './client-errors.js';
import { makeRoomFor, warnDropped } from './connection-cap.js';

/** What one client may hold of the gateway (contract section 6, Limits). */
export interface ClientLimits {
  /** Connections held open at once; past it a new one is closed at once. */
  maxConnections: number;
  /** From a request's first byte to the end of its headers. */
  headersTimeoutMs: number;
  /** From a request's first byte to the end of its body. */
  requestTimeoutMs: number;
  /** A keep-alive connection with no request under way. */
  keepAliveTimeoutMs: number;
  /** No byte moves either way while a request is under way (a client that stopped reading). */
  idleTimeoutMs: number;
  /** Answer bytes a connection may leave unread; past it the connection is cut. */
  responseBufferMaxBytes: number;
}

export interface HttpServer {
  readonly server: Server;
  /** Listens; resolves to `http://host:port`. */
  listen(port: number, host: string): Promise<string>;
  /** A stop begins: every answer still to be written says `Connection: close`. */
  beginStop(): void;
  /** Stops listening and closes idle connections, used or not; resolves when all are gone. */
  close(): Promise<void>;
  /** Cuts every connection at once (a stop past its deadline). */
  destroyAll(): void;
}

/**
 * Requests one connection may have queued at once. Browsers never pipeline (they wait for each
 * answer); a client with more than this many unanswered requests on one connection is not
 * reading them, and every queued answer is memory (cf. nginx, which answers one at a time).
 */
const MAX_QUEUED_PER_CONNECTION = 16;

/**
 * How long a stop waits for the first request of a connection that has sent none yet: enough
 * for a client already sending one, far below any stop deadline.
 */
const FIRST_REQUEST_GRACE_MS = 1000;

/** A stop closes the listener once no connection has been accepted for this long… */
const QUIET_ACCEPTS_MS = 50;
/** …or after this, whatever keeps connecting. */
const QUIET_ACCEPTS_MAX_MS = 1000;

/**
 * The public listener with every per-client bound in place: a connection cap, header, body,
 * keep-alive and idle timeouts, a bound on unread answer bytes, problem+json for Node's own
 * parser errors, and a stop that closes connections nobody is using (including ones that
 * never sent a request) while the ones under way finish with `Connection: close`.
 */
export function createHttpServer(options: {
  handler: RequestListener;
  limits: ClientLimits;
  logger: Logger;
  /**
   * At the cap, the oldest connection with no request under way gives way to the new one
   * instead of the new one being refused: what the operations listener needs, so that a client
   * that keeps reopening silent connections cannot lock probes out (contract section 7, "The
   * operations port answers"). Node's own `maxConnections` can only refuse the newcomer.
   */
  evictSilentAtCap?: boolean;
}): HttpServer {
  const { limits } = options;
  const evict = options.evictSilentAtCap === true;
  const throttle = createLogThrottle(options.logger);
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      // Node checks the header and request timeouts this often (30 s by default, which would
      // let a slow client outlive its timeout by that much).
      connectionsCheckingInterval: 1000,
      // Node's own refusal of a Host-less HTTP/1.1 request is a bare 400; the gateway answers
      // it as problem+json below (contract section 7, "Edges").
      requireHostHeader: false,
    },
    (req, res) => {
      if (!connections.admit(req.socket)) return;
      if (lacksHost(req)) answerMissingHost(res, throttle);
      else options.handler(req, res);
    },
  );
  if (!evict) server.maxConnections = limits.maxConnections;
  server.timeout = limits.idleTimeoutMs;
  server.on('drop', (data?: { remoteAddress?: string }) => warnDropped(throttle, data));
  const connections = trackConnections(server, limits, throttle, evict);
  answerClientErrors(server, throttle);

  return {
    server,
    listen: (port, host) => listen(server, port, host),
    beginStop: () => connections.beginStop(),
    async close() {
      await closeWhenQuiet(server, () => connections.accepted);
      const closed = server.listening
        ? new Promise<void>((resolve) => server.close(() => resolve()))
        : Promise.resolve();
      connections.closeIdle();
      await closed;
    },
    destroyAll() {
      server.closeAllConnections();
      for (const socket of connections.busy.keys()) socket.destroy();
    },
  };
}

/**
 * Requests under way per connection, which connections have sent one, and how many were
 * accepted: what a stop needs to close idle connections (including ones that never sent a
 * request) and to let the ones under way finish with `Connection: close`.
 */
function trackConnections(
  server: Server,
  limits: ClientLimits,
  throttle: LogThrottle,
  evict: boolean,
) {
  // Requests under way per connection: a connection with none is idle, even one that never
  // sent a request (closeIdleConnections() does not see those). Kept in the order the
  // connections arrived, oldest first.
  const busy = new Map<Socket, number>();
  /** Connections that have sent a request: idle ones among them are closed at once at a stop. */
  const used = new WeakSet<Socket>();
  let stopping = false;
  let accepted = 0;
  server.on('connection', (socket: Socket) => {
    accepted += 1;
    busy.set(socket, 0);
    socket.once('close', () => busy.delete(socket));
    if (evict && busy.size > limits.maxConnections) makeRoomFor(socket, busy, used, throttle);
  });
  /**
   * A client that does not read what it is sent holds the gateway's memory: Node answers every
   * pipelined request it has read and queues the answers behind the unread ones. Past the
   * bound on unread bytes, or with more requests queued on one connection than any client
   * needs, the connection is cut before the request is even handled.
   */
  function admit(socket: Socket): boolean {
    const queued = (busy.get(socket) ?? 0) + 1;
    busy.set(socket, queued);
    if (
      queued <= MAX_QUEUED_PER_CONNECTION &&
      socket.writableLength <= limits.responseBufferMaxBytes
    ) {
      return true;
    }
    cutUnread(socket, throttle);
    return false;
  }
  server.on('request', (req, res) => {
    const socket = req.socket;
    used.add(socket);
    if (stopping) res.shouldKeepAlive = false;
    res.once('finish', () => {
      if (socket.writableLength > limits.responseBufferMaxBytes) cutUnread(socket, throttle);
    });
    res.once('close', () => {
      const requests = busy.get(socket);
      if (requests === undefined) return; // the connection is gone already
      const left = requests - 1;
      busy.set(socket, left);
      if (stopping && left === 0 && !server.listening) socket.end();
    });
  });
  return {
    busy,
    get accepted() {
      return accepted;
    },
    admit,
    beginStop() {
      stopping = true;
      // Answers already being written tell their client not to send another request here.
      for (const socket of busy.keys()) {
        const response = (
          socket as Socket & { _httpMessage?: { headersSent: boolean; shouldKeepAlive: boolean } }
        )._httpMessage;
        if (response && !response.headersSent) response.shouldKeepAlive = false;
      }
    },
    /** Closes the idle connections: at once if used, after a grace if they never sent a request. */
    closeIdle() {
      for (const [socket, requests] of busy) {
        if (requests > 0) continue;
        // A connection that has not sent its first request yet may be sending it right now
        // (a client that was told `Connection: close` and came back on a new one): it gets a
        // moment to, and is answered; one that stays silent is closed after it.
        if (used.has(socket)) socket.destroy();
        else
          setTimeout(
            () => busy.get(socket) === 0 && socket.destroy(),
            FIRST_REQUEST_GRACE_MS,
          ).unref();
      }
    },
  };
}

/** A connection whose client does not read its answers is cut, and said so (throttled). */
function cutUnread(socket: Socket, throttle: LogThrottle): void {
  throttle.warn(
    'unread',
    { remoteAddress: socket.remoteAddress },
    'client does not read its answers: connection cut',
  );
  socket.destroy();
}

/**
 * Waits until accepting has been quiet for a moment (or a bound has passed) before the
 * listener closes.
 */
async function closeWhenQuiet(server: Server, accepted: () => number): Promise<void> {
  // Closing a listener resets the connections still waiting in its accept queue: clients
  // told `Connection: close` during the drain come back on new connections, so the listener
  // closes once accepting has been quiet for a moment (or after a bound), not mid-wave.
  const bound = performance.now() + QUIET_ACCEPTS_MAX_MS;
  // At least one wait, so connections the kernel holds are accepted before the check. A
  // loop that was blocked runs its due timers before it polls for I/O, so the check waits
  // for the poll phase after the timer: connections queued meanwhile are accepted first.
  while (server.listening) {
    const before = accepted();
    await sleep(QUIET_ACCEPTS_MS);
    await afterPoll();
    if (accepted() === before || performance.now() >= bound) break;
  }
}

/** Listens; resolves to `http://host:port` (an IPv6 host in brackets). */
function listen(server: Server, port: number, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address() as AddressInfo;
      const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      resolve(`http://${shown}:${address.port}`);
    });
  });
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Faults a simulator can be switched into. They model what a real upstream does on a bad day;
 * they never depend on what the gateway does.
 */
export type Fault =
  /** Wait, then answer normally (or hang if `ms` exceeds the caller's patience). */
  | { kind: 'delay'; ms: number }
  /** Answer with this status and an optional body / headers instead of the real answer. */
  | {
      kind: 'status';
      status: number;
      body?: string;
      headers?: Record<string, string>;
      /** Answer only after this long: a slow error. */
      afterMs?: number;
    }
  /**
   * Answer with this status and JSON `body`, each `{header}` in it replaced by the value of the
   * request's `header` (JSON-escaped): a server whose error echoes what it was sent, such as
   * `{"result":"error","msg":"Bad credentials: {header}"}` with `authorization`.
   */
  | { kind: 'echo'; status: number; header: string; body: string }
  /** Destroy the socket without writing a response (ECONNRESET on the client side). */
  | { kind: 'reset' }
  /** 200 with a body that is not JSON at all. */
  | { kind: 'malformed' }
  /** 200 promising more bytes than it sends, then closing the connection. */
  | { kind: 'truncated' }
  /** Accept the request and never answer. */
  | { kind: 'hang' }
  /**
   * Answer one byte per `intervalMs`, never finishing (issue 10: an upstream dribbling its
   * headers held a request 283 s). `head` (the default): the status line, then a header whose
   * value never ends, so the response head never completes. `body`: a whole head promising a
   * large JSON body, then that body one byte at a time. Writing stops when the socket closes.
   */
  | { kind: 'dribble'; intervalMs: number; part?: 'head' | 'body' };

export interface FaultRule {
  fault: Fault;
  /** Only requests whose pathname starts with this prefix; all requests when absent. */
  pathPrefix?: string;
  /** How many matching requests it applies to; forever when absent. */
  times?: number;
}

/** An ordered set of fault rules; the first matching rule with uses left wins. */
export class FaultPlan {
  readonly #rules: { rule: FaultRule; left: number }[] = [];

  add(rule: FaultRule): void {
    this.#rules.push({ rule, left: rule.times ?? Number.POSITIVE_INFINITY });
  }

  clear(): void {
    this.#rules.length = 0;
  }

  take(pathname: string): Fault | undefined {
    for (const entry of this.#rules) {
      const prefix = entry.rule.pathPrefix;
      if (entry.left <= 0 || (prefix !== undefined && !pathname.startsWith(prefix))) continue;
      entry.left -= 1;
      return entry.rule.fault;
    }
    return undefined;
  }
}

/**
 * Applies a fault to a request. Returns true when the fault produced the whole answer
 * (or deliberately none), false when the simulator should go on and answer normally.
 */
export async function applyFault(
  fault: Fault,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<boolean> {
  switch (fault.kind) {
    case 'delay':
      await sleep(fault.ms);
      // The request stream is already consumed (and auto-destroyed); the socket says if the client left.
      return req.socket.destroyed;
    case 'status':
      if (fault.afterMs !== undefined) await sleep(fault.afterMs);
      if (req.socket.destroyed) return true;
      res.writeHead(fault.status, {
        'content-type': 'application/json',
        ...fault.headers,
      });
      res.end(fault.body ?? JSON.stringify({ error: `simulated ${fault.status}` }));
      return true;
    case 'echo': {
      const value = req.headers[fault.header.toLowerCase()];
      const echoed = JSON.stringify(Array.isArray(value) ? value.join(', ') : (value ?? ''));
      res.writeHead(fault.status, { 'content-type': 'application/json' });
      res.end(fault.body.replaceAll('{header}', echoed.slice(1, -1)));
      return true;
    }
    case 'reset':
      req.socket.destroy();
      return true;
    case 'malformed':
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><body>502 Bad Gateway (simulated proxy page)</body></html>');
      return true;
    case 'truncated':
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '4096' });
      res.write('{"itemListElement":[{"name":"cut off');
      setImmediate(() => req.socket.destroy());
      return true;
    case 'hang':
      return true;
    case 'dribble':
      dribble(fault, req.socket, res);
      return true;
  }
}

/**
 * The head a dribbling upstream starts: its last header's value goes on without end (a client's
 * 16 KiB header limit is met only after that many intervals, far past any deadline).
 */
const DRIBBLED_HEAD = 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nx-dribble: ';
/** What a dribbled body promises: far more bytes than any deadline lets through. */
const DRIBBLED_BODY_BYTES = 1024 * 1024;

function dribble(
  fault: Extract<Fault, { kind: 'dribble' }>,
  socket: Socket,
  res: ServerResponse,
): void {
  // A client already gone would never fire 'close' again: no timer to leak.
  if (socket.destroyed) return;
  const part = fault.part ?? 'head';
  if (part === 'body') {
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': DRIBBLED_BODY_BYTES,
    });
    res.flushHeaders();
  }
  let sent = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || (part === 'body' && sent >= DRIBBLED_BODY_BYTES)) {
      clearInterval(timer);
      return;
    }
    if (part === 'head') {
      // Straight to the socket: the server's own response writer only sends whole heads.
      socket.write(DRIBBLED_HEAD[sent] ?? 'a');
    } else {
      res.write(sent === 0 ? '[' : ' ');
    }
    sent += 1;
  }, fault.intervalMs);
  // The client giving up (or the simulator's close()) ends the dribble at once.
  socket.once('close', () => clearInterval(timer));
}

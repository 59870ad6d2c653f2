import type { IncomingMessage, ServerResponse } from 'node:http';
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
  /** Destroy the socket without writing a response (ECONNRESET on the client side). */
  | { kind: 'reset' }
  /** 200 with a body that is not JSON at all. */
  | { kind: 'malformed' }
  /** 200 promising more bytes than it sends, then closing the connection. */
  | { kind: 'truncated' }
  /** Accept the request and never answer. */
  | { kind: 'hang' };

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
  }
}

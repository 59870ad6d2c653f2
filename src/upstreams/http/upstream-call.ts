import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AppError } from '../../errors/app-error.js';

/*
 * What a call to an upstream is, whichever transport carries it: a JSON call over undici
 * (json-transport.ts) or the redirect proxied byte for byte (proxy-transport.ts).
 */

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body exactly as received, read once. */
  body: Buffer;
}

export interface UpstreamCall<T> {
  /** What the call is for, as the metrics' `operation` label says it (e.g. `search`, `drafts`). */
  operation: string;
  method: 'GET' | 'POST' | 'DELETE';
  /** Path and query below the base URL, already encoded: the pool fixes the origin. */
  path: string;
  /** Built from configuration by the client, never copied from the browser. */
  headers: Record<string, string>;
  body?: string;
  requestId: string;
  deadlineMs: number;
  /**
   * Idempotent reads may be retried once, after a jittered pause and only if enough of the
   * deadline is left, on a failure whose row in upstream-failures.ts allows it (a refused or
   * reset connection, a 502/503/504 that `accept` turned into its error). Never for writes.
   */
  retry?: boolean;
  /**
   * A long-poll (the chat server's event queue): a connection pool of its own whose timeouts
   * sit above the call's deadline, no retry, and no breaker: a long-poll that ends without
   * events, or slowly, is not a failing upstream.
   */
  longPoll?: boolean;
  /** Ends the call early (a stop, a lost lease); it then fails like a timeout. */
  signal?: AbortSignal;
  /**
   * Turns the response into the call's value, or throws the contract's error for it
   * (to-upstream-error.ts). It runs inside the breaker, so a broken body counts against the
   * upstream like a refused connection, and before any retry, which its error decides.
   */
  accept(response: UpstreamResponse): T;
}

export interface ProxyCall {
  operation: string;
  /** Path and query below the base URL, exactly as they go on the wire. */
  path: string;
  /** Request headers that may travel (lower case); every other one is dropped. */
  forwardHeaders: ReadonlySet<string>;
  requestId: string;
  deadlineMs: number;
  /**
   * Gets the upstream's response head: writes the answer to `res`, or returns the error to
   * answer with instead (which the breaker then judges like any other).
   */
  respond(upstream: IncomingMessage, res: ServerResponse): AppError | undefined;
}

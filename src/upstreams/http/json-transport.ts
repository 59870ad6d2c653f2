import { EventEmitter } from 'node:events';
import { finished, type Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { AppError } from '../../errors/app-error.js';
import { outgoingTraceHeaders } from '../../observability/trace-context.js';
import { isRetryable, toUpstreamError } from '../to-upstream-error.js';
import type { UpstreamSource } from '../upstream-failures.js';
import type { UpstreamCall, UpstreamResponse } from './upstream-call.js';

const RETRY_PAUSE_MS = { min: 25, max: 100 };
/** A retry is only worth it with this much of the deadline left after the pause. */
const RETRY_MIN_LEFT_MS = 250;

export interface JsonTransport {
  /**
   * Sends the call within its deadline and accepts its answer, retried once when it may be;
   * failures mapped (to-upstream-error.ts).
   */
  send<T>(call: UpstreamCall<T>): Promise<T>;
  /** Waits for calls under way, or with `force` destroys them. */
  close(force: boolean): Promise<void>;
}

/** JSON calls over undici: one pool, and one more for long-polls, made on the first. */
export function createJsonTransport(options: {
  source: UpstreamSource;
  base: URL;
  /** The base URL's path, without a trailing slash: every call's path goes below it. */
  basePath: string;
  connectTimeoutMs: number;
  maxDeadlineMs: number;
  maxResponseBytes: number;
  connections: number;
}): JsonTransport {
  const { source, base, basePath } = options;
  // undici's own header and body timeouts default to 300 s; every call carries its own
  // deadline, and these are backstops at the longest one so no socket outlives it.
  const pool = new Pool(base.origin, {
    connections: options.connections,
    connect: { timeout: options.connectTimeoutMs },
    headersTimeout: options.maxDeadlineMs,
    bodyTimeout: options.maxDeadlineMs,
    keepAliveTimeout: 4_000,
    maxResponseSize: options.maxResponseBytes,
  });

  // Created on the first long-poll: its header and body timeouts must outlast the poll.
  let longPool: Pool | undefined;
  const poolFor = (call: UpstreamCall<unknown>): Pool => {
    if (!call.longPoll) return pool;
    longPool ??= new Pool(base.origin, {
      connections: 2,
      connect: { timeout: options.connectTimeoutMs },
      headersTimeout: 0,
      bodyTimeout: 0,
      maxResponseSize: options.maxResponseBytes,
    });
    return longPool;
  };

  async function sendOnce(
    call: UpstreamCall<unknown>,
    signal: CallDeadline,
  ): Promise<UpstreamResponse> {
    const response = await poolFor(call).request({
      method: call.method,
      path: `${basePath}${call.path}`,
      headers: { ...call.headers, ...outgoingTraceHeaders(), 'x-request-id': call.requestId },
      body: call.body ?? null,
      signal,
    });
    return {
      status: response.statusCode,
      headers: response.headers,
      body: await readBody(response.body),
    };
  }

  return {
    send: (call) => sendWithRetry(call, source, (signal) => sendOnce(call, signal)),
    async close(force) {
      const pools = longPool === undefined ? [pool] : [pool, longPool];
      await Promise.all(pools.map((p) => (force ? p.destroy() : p.close()).catch(() => undefined)));
    },
  };
}

/**
 * The body's bytes. undici's `arrayBuffer()` copies even a body that came in one read; a body
 * of one chunk is kept as that chunk here (a view of the socket's read), and only a body in
 * several is joined. Each copy is a block outside V8's heap that lives as long as the miss
 * does, and those that outlive two young-generation collections wait for a full one.
 */
function readBody(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  body.on('data', (chunk: Buffer) => chunks.push(chunk));
  return new Promise((resolve, reject) => {
    finished(body, (error) => {
      if (error) reject(error);
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    });
  });
}

/**
 * One deadline for the whole call, retry and body included (the browser's wait is bounded);
 * idempotent reads retried once, after a jittered pause when enough of the deadline is left,
 * on a failure whose row in upstream-failures.ts allows it (a refused or reset connection, a
 * 502/503/504).
 */
async function sendWithRetry<T>(
  call: UpstreamCall<T>,
  source: UpstreamSource,
  sendOnce: (signal: CallDeadline) => Promise<UpstreamResponse>,
): Promise<T> {
  const signal = new CallDeadline(call.deadlineMs, call.signal);
  const deadline = Date.now() + call.deadlineMs;
  const retryPause = () => {
    const pause = RETRY_PAUSE_MS.min + Math.random() * (RETRY_PAUSE_MS.max - RETRY_PAUSE_MS.min);
    const left = deadline - Date.now() - pause;
    return left >= Math.min(RETRY_MIN_LEFT_MS, call.deadlineMs / 2) ? pause : undefined;
  };
  try {
    for (let n = 0; ; n += 1) {
      const outcome = await attempt(call, source, signal, sendOnce);
      if (!(outcome instanceof AppError)) return outcome.value;
      const mayRetry = call.retry === true && n === 0 && isRetryable(outcome);
      const pause = mayRetry ? retryPause() : undefined;
      if (pause === undefined) throw outcome;
      await sleep(pause);
    }
  } finally {
    signal.clear();
  }
}

/**
 * The signal undici aborts a call by: aborted after `ms` with a TimeoutError as
 * AbortSignal.timeout's is, or with the reason of `outer` when that aborts first (a long-poll
 * stopped). Its timer is cleared once the call is over: AbortSignal.timeout's own stays in the
 * timer list for the whole deadline, and a miss every few milliseconds kept thousands of them
 * (and what they hold) alive for 5 s each.
 *
 * An EventEmitter, which undici takes as a signal as well (`aborted`, `reason`, one `abort`
 * event), and not an AbortController: on Node 20 an AbortSignal that is given a listener (undici
 * gives one to every call) costs more than an emitter that is. In a loop that only makes them,
 * an AbortSignal given a listener ran at half the rate and brought ~20 full collections in 2 s
 * where an emitter brought one; against the build before, a search miss cost 0.92–1.00 of its
 * CPU in five paired comparisons (docs/log/measurements.md, 2026-11-28). It also replaces
 * `AbortSignal.any`, which retains its signals on Node 20.
 */
export class CallDeadline extends EventEmitter {
  aborted = false;
  reason: unknown = undefined;
  readonly #timer: NodeJS.Timeout;
  readonly #outer: AbortSignal | undefined;
  readonly #onOuter = (): void => this.#abort(this.#outer?.reason);

  constructor(ms: number, outer?: AbortSignal) {
    super();
    this.#timer = setTimeout(
      () =>
        this.#abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
      ms,
    );
    // Like AbortSignal.timeout's, it keeps no process alive by itself.
    this.#timer.unref();
    this.#outer = outer;
    if (outer?.aborted) this.#abort(outer.reason);
    else outer?.addEventListener('abort', this.#onOuter, { once: true });
  }

  /** The call is over: no timer left, nothing listened to. */
  clear(): void {
    clearTimeout(this.#timer);
    this.#outer?.removeEventListener('abort', this.#onOuter);
  }

  #abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.clear();
    this.emit('abort');
  }
}

/**
 * One exchange: the accepted value, or the contract's error for the failure, whether no answer
 * came or `accept` refused the one that did. Anything else `accept` throws is a bug, not an
 * upstream failure, and goes on as it is.
 */
async function attempt<T>(
  call: UpstreamCall<T>,
  source: UpstreamSource,
  signal: CallDeadline,
  sendOnce: (signal: CallDeadline) => Promise<UpstreamResponse>,
): Promise<{ value: T } | AppError> {
  let response: UpstreamResponse;
  try {
    response = await sendOnce(signal);
  } catch (error) {
    const { operation, deadlineMs } = call;
    return toUpstreamError({
      source,
      operation,
      error,
      deadlineMs,
      deadlinePassed: signal.aborted,
    });
  }
  try {
    return { value: call.accept(response) };
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
}

import CircuitBreaker from 'opossum';
import type { Logger } from 'pino';
import type { BreakerThresholds } from '../../config/load-config.js';
import { withinDeadline } from './deadline.js';

export type BreakerState = 'closed' | 'open' | 'half-open';

export interface Breaker {
  /** Runs an operation through the breaker; while open it fails fast without running it. */
  run<T>(operation: () => Promise<T>): Promise<T>;
  readonly state: BreakerState;
  /** Whole seconds until the breaker lets a probe through (0 unless open). */
  retryAfterSeconds(): number;
  /**
   * Whether `error` is this breaker's own fail-fast refusal rather than a failure of the call.
   * Callers log real failures, and leave the refusals to the breaker's own state-change line.
   */
  rejected(error: unknown): boolean;
  shutdown(): void;
}

export interface BreakerOptions {
  /** What it guards, for logs and readiness: `search`, `chat`, `redis`. */
  name: string;
  thresholds: BreakerThresholds;
  logger: Logger;
  /** Which failures count against the upstream; anything else passes through uncounted. */
  isFailure(error: unknown): boolean;
  /** The error to answer with while open. */
  openError(retryAfterSeconds: number): Error;
  /**
   * Each call's deadline, judged after the event loop has read what arrived (deadline.ts):
   * for calls that carry none of their own (Redis commands); upstream calls carry theirs.
   */
  deadlineMs?: number;
  now?: () => number;
}

/**
 * A circuit breaker (opossum): after `failurePercent` of at least `minRequests` calls in the
 * rolling window fail, calls fail fast for `openSeconds`; then one probe is let through, and
 * its outcome closes or reopens the circuit. State changes are logged.
 */
export function createBreaker(options: BreakerOptions): Breaker {
  const now = options.now ?? Date.now;
  const { thresholds, logger, name } = options;
  const { deadlineMs } = options;
  const expired = () => new Error(`${name}: no answer within ${deadlineMs} ms`);
  const call =
    deadlineMs === undefined
      ? (operation: () => Promise<unknown>) => operation()
      : (operation: () => Promise<unknown>) => withinDeadline(operation(), deadlineMs, expired);
  const breaker = new CircuitBreaker(call, {
    // Calls carry their own deadline (`deadlineMs`, or the upstream call's): opossum's timer
    // is a plain one, and would fail a reply that is read late because the process was busy.
    timeout: false,
    errorThresholdPercentage: thresholds.failurePercent,
    volumeThreshold: thresholds.minRequests,
    rollingCountTimeout: thresholds.windowSeconds * 1000,
    resetTimeout: thresholds.openSeconds * 1000,
    errorFilter: (error: unknown) => !options.isFailure(error),
    // Nothing reads latency percentiles or snapshots, and each costs work on every call and
    // every half second per breaker: a sort of every latency in the window, exactly when a
    // starved process can least afford it (shared/measurements/miss-path.md).
    rollingPercentilesEnabled: false,
    enableSnapshots: false,
  });
  let openedAt = 0;
  breaker.on('open', () => {
    openedAt = now();
    logger.warn(
      { breaker: name },
      `circuit ${name} open: failing fast for ${thresholds.openSeconds} s`,
    );
  });
  breaker.on('halfOpen', () =>
    logger.info({ breaker: name }, `circuit ${name} half-open: probing`),
  );
  breaker.on('close', () => logger.info({ breaker: name }, `circuit ${name} closed`));

  const retryAfterSeconds = () =>
    breaker.opened
      ? Math.max(1, Math.ceil((openedAt + thresholds.openSeconds * 1000 - now()) / 1000))
      : 0;
  // Half-open rejects callers too while its one probe runs: they are told to wait at least a
  // second, never to come straight back.
  const rejectionRetryAfter = () => Math.max(1, retryAfterSeconds());
  const refusals = new WeakSet<object>();

  return {
    async run<T>(operation: () => Promise<T>): Promise<T> {
      try {
        return (await breaker.fire(operation)) as T;
      } catch (error) {
        if ((error as { code?: unknown }).code === 'EOPENBREAKER') {
          const refusal = options.openError(rejectionRetryAfter());
          refusals.add(refusal);
          throw refusal;
        }
        throw error;
      }
    },
    get state(): BreakerState {
      return breaker.opened ? 'open' : breaker.halfOpen ? 'half-open' : 'closed';
    },
    retryAfterSeconds,
    rejected: (error) => typeof error === 'object' && error !== null && refusals.has(error),
    shutdown: () => breaker.shutdown(),
  };
}

import type { EventEmitter } from 'node:events';

export interface EventuallyOptions {
  /** What is awaited, in words: the failure message names it. */
  what: string;
  /**
   * When to give up. A bound on failure, never an assertion of speed: generous, since a loaded
   * 2-core machine is slow by design. Default 10 s (the test timeout is 20 s).
   */
  timeoutMs?: number;
  /**
   * Events after which the check is worth trying again (a simulator's 'request', a socket's
   * 'data'). With them the check runs when something happened; the back-off below only
   * covers what no event announces.
   */
  on?: readonly (readonly [emitter: EventEmitter, event: string])[];
  /**
   * A fixed pause between checks instead of the back-off, for a check that costs something
   * itself (one that starts redis-cli processes).
   */
  intervalMs?: number;
}

/** A check's answer that means "not yet". */
type NotYet = false | undefined | null;

/** Waits between checks: a few turns of the event loop first, then doubling up to this. */
const MAX_BACKOFF_MS = 100;

/**
 * Resolves with the first answer of `check` that is neither false, undefined nor null. The
 * check runs now, after each of `on`'s events, and after a short back-off otherwise
 * (setImmediate, then 1, 2, 4 … up to 100 ms). A check that throws ends the wait with its error
 * at once: an assertion inside it is an assertion, not a "not yet" (a check that may fail while
 * waiting catches that itself). After `timeoutMs` it rejects with a message naming `what`. One
 * check at a time: a slow async check is never run twice at once.
 */
export function eventually<T>(
  check: () => T | Promise<T>,
  options: EventuallyOptions,
): Promise<Exclude<T, NotYet>> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  return new Promise((resolve, reject) => {
    let running = false;
    let again = false;
    let finished = false;
    /** Checks since the last event: the back-off grows with them. */
    let tries = 0;
    let cancelWait: (() => void) | undefined;

    const finish = (outcome: () => void) => {
      finished = true;
      clearTimeout(deadline);
      cancelWait?.();
      for (const [emitter, event] of options.on ?? []) emitter.off(event, wake);
      outcome();
    };
    /** intervalMs, or three turns of the event loop, then 1, 2, 4 … ms up to MAX_BACKOFF_MS. */
    const wait = () => {
      tries += 1;
      if (options.intervalMs !== undefined) {
        const timer = setTimeout(() => void attempt(), options.intervalMs);
        cancelWait = () => clearTimeout(timer);
      } else if (tries <= 3) {
        const immediate = setImmediate(() => void attempt());
        cancelWait = () => clearImmediate(immediate);
      } else {
        const timer = setTimeout(() => void attempt(), Math.min(2 ** (tries - 4), MAX_BACKOFF_MS));
        cancelWait = () => clearTimeout(timer);
      }
    };
    async function attempt(): Promise<void> {
      cancelWait = undefined;
      if (finished) return;
      if (running) {
        again = true;
        return;
      }
      running = true;
      try {
        const answer = await check();
        if (answer !== false && answer !== undefined && answer !== null) {
          finish(() => resolve(answer as Exclude<T, NotYet>));
          return;
        }
      } catch (error) {
        finish(() => reject(error instanceof Error ? error : new Error(String(error))));
        return;
      } finally {
        running = false;
      }
      if (finished) return;
      if (again) {
        again = false;
        void attempt();
        return;
      }
      wait();
    }
    /** Something happened: check again now, and start the back-off over. */
    function wake(): void {
      tries = 0;
      cancelWait?.();
      cancelWait = undefined;
      void attempt();
    }

    const deadline = setTimeout(() => {
      finish(() =>
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${options.what}`)),
      );
    }, timeoutMs);
    for (const [emitter, event] of options.on ?? []) emitter.on(event, wake);
    void attempt();
  });
}

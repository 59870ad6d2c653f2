/**
 * `operation`, or `expired()`'s error once `ms` have passed without it settling, judged after
 * the event loop has read what arrived meanwhile. A plain timer is not enough for a call whose
 * reply is quick but whose process is busy: when one turn of the loop runs past the deadline
 * (a cold start taking 200 requests at once, a long synchronous task), timers run before the
 * sockets are read, and a reply sitting in the socket would be called late. Here the timer
 * only schedules the verdict for after the next poll phase (`setImmediate`), so a reply that
 * has arrived is taken, and only a call that is really unanswered fails.
 * (shared/measurements/miss-path.md: ioredis's own commandTimeout failed a fresh gateway's
 * Redis calls this way, the breaker opened, and a stampede made a second upstream call.)
 */
export function withinDeadline<T>(
  operation: Promise<T>,
  ms: number,
  expired: () => Error,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      setImmediate(() => {
        if (settled) return;
        settled = true;
        reject(expired());
      });
    }, ms);
    operation.then(
      (value) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

import type { Logger } from 'pino';

/** How a resource closes: gracefully, or at once when the stop is past its deadline. */
export interface Closing {
  readonly force: boolean;
}

/** What a hook that begins the stop is told. */
export interface PreClosing {
  /** How long the listeners go on accepting: what begins now may end spread over it. */
  readonly drainDelayMs: number;
}

export interface LifecycleOptions {
  logger: Logger;
  /**
   * How long the listeners go on accepting once a stop has begun, so that load balancers see a
   * probe or two fail before the port goes (SHUTDOWN_DRAIN_DELAY_MS). None by default.
   */
  drainDelayMs?: number;
  /**
   * From the stop's beginning, how long the drain may take (SHUTDOWN_TIMEOUT_MS): past it,
   * what is still draining is cut and everything closes at once. No bound by default.
   */
  timeoutMs?: number;
}

/**
 * What the gateway opens and closes, registered by each resource where it is created (as
 * fastify's `preClose` and `onClose` hooks are), so that nothing lists the resources by hand: a
 * new one registers its own start and stop, and its place in the stop follows from where it
 * was built. A stop runs in three phases: `onPreClose` hooks all at once; after the drain
 * delay, `onDrain` hooks, the last registered first; then `onClose` hooks, the last first too.
 */
export interface Lifecycle {
  /** Something to connect when the gateway starts; everything registered starts together. */
  onStart(name: string, start: () => Promise<unknown>): void;
  /**
   * What begins the stop (readiness turning 503, streams beginning to end): every such hook runs
   * at once when a stop begins, in registration order, none waiting for another. What it
   * returns is waited for after the drain delay, before the first `onDrain` hook runs.
   */
  onPreClose(name: string, begin: (stop: PreClosing) => unknown): void;
  /**
   * The work of requests finishing: a listener closing once its answers are out, the writes
   * they left settling. Runs after the drain delay, the last registered first, each awaited
   * before the next. The stop is clean when every one finishes before the deadline; past it,
   * `cut` runs for each that had not (they still run on, unwaited).
   */
  onDrain(name: string, drain: () => unknown, cut?: () => void): void;
  /**
   * How to close what was just created. Runs once the drain is over (or cut), the last
   * registered first, each awaited before the next: what was built on a resource closes before
   * that resource does. One still closing at the deadline is left to finish alone, and those
   * after it are told to force.
   */
  onClose(name: string, close: (closing: Closing) => unknown): void;
  /** Starts everything registered, together; resolves once every start has settled. */
  start(): Promise<void>;
  /**
   * Stops, in the phases above; resolves to whether the drain finished before the deadline. A
   * hook that fails is logged by name and the others still run. `force`: the deadline is
   * already past (no drain delay, the drain is cut). Runs once; later calls wait for it.
   */
  close(closing?: Closing): Promise<boolean>;
}

interface Registered<T> {
  name: string;
  run: T;
}

interface DrainHook extends Registered<() => unknown> {
  cut: (() => void) | undefined;
}

export function createLifecycle(options: LifecycleOptions): Lifecycle {
  const { logger, drainDelayMs = 0 } = options;
  const starts: Registered<() => Promise<unknown>>[] = [];
  const preCloses: Registered<(stop: PreClosing) => unknown>[] = [];
  const drains: DrainHook[] = [];
  const closes: Registered<(closing: Closing) => unknown>[] = [];
  let stopped: Promise<boolean> | undefined;

  /** Runs one hook; one that fails (or throws at once) is logged by name and counts as done. */
  async function attempt(name: string, phase: string, run: () => unknown): Promise<void> {
    try {
      await run();
    } catch (error) {
      logger.warn({ err: error, resource: name, phase }, 'a resource failed to close');
    }
  }

  /** The drain: the delay, what the pre-close hooks began, then each drain hook in turn. */
  async function drain(begun: Promise<void>[], pending: Set<DrainHook>, forced: boolean) {
    // The global timer (not timers/promises): tests move it with fake timers.
    if (!forced) await new Promise((resolve) => setTimeout(resolve, drainDelayMs));
    await Promise.all(begun);
    for (const hook of drains.toReversed()) {
      await attempt(hook.name, 'drain', hook.run);
      pending.delete(hook);
    }
    return true;
  }

  async function stop(force: boolean): Promise<boolean> {
    const deadline = createDeadline(force ? 0 : options.timeoutMs);
    const begun = preCloses.map(({ name, run }) =>
      attempt(name, 'pre-close', () => run({ drainDelayMs })),
    );
    const pending = new Set(drains);
    const clean = await Promise.race([drain(begun, pending, force), deadline.passed]);
    for (const { name, cut } of pending) if (cut) void attempt(name, 'cut', cut);
    for (const { name, run } of closes.toReversed()) {
      const closed = attempt(name, 'close', () => run({ force: deadline.past }));
      // Past the deadline a close is forced, and a forced close is quick: it is waited for.
      await (deadline.past ? closed : Promise.race([closed, deadline.passed]));
    }
    deadline.clear();
    return clean;
  }

  return {
    onStart: (name, run) => void starts.push({ name, run }),
    onPreClose: (name, run) => void preCloses.push({ name, run }),
    onDrain: (name, run, cut) => void drains.push({ name, run, cut }),
    onClose: (name, run) => void closes.push({ name, run }),
    async start() {
      await Promise.allSettled(starts.map(({ run }) => run()));
    },
    close(closing) {
      stopped ??= stop(closing?.force ?? false);
      return stopped;
    },
  };
}

/** A stop's deadline: `passed` resolves to false once it is past; 0 is past already. */
function createDeadline(ms: number | undefined) {
  let past = ms === 0;
  let timer: NodeJS.Timeout | undefined;
  const passed = new Promise<false>((resolve) => {
    if (past) resolve(false);
    else if (ms !== undefined) {
      timer = setTimeout(() => {
        past = true;
        resolve(false);
      }, ms).unref();
    }
  });
  return {
    passed,
    get past() {
      return past;
    },
    clear: () => clearTimeout(timer),
  };
}

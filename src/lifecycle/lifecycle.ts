import type { Logger } from 'pino';

/** How a resource closes: gracefully, or at once when the stop is past its deadline. */
export interface Closing {
  readonly force: boolean;
}

/**
 * What the gateway opens and closes, registered by each resource where it is created (as
 * fastify's `onClose` hooks are), so that nothing lists the resources by hand: a new one
 * registers its own start and close, and its place in the stop follows from where it was built.
 */
export interface Lifecycle {
  /** Something to connect when the gateway starts; everything registered starts together. */
  onStart(name: string, start: () => Promise<unknown>): void;
  /**
   * How to close what was just created. A stop closes in the reverse order of registration:
   * what was built on a resource closes before that resource does.
   */
  onClose(name: string, close: (closing: Closing) => unknown): void;
  /** Starts everything registered, together; resolves once every start has settled. */
  start(): Promise<void>;
  /**
   * Closes everything registered, the last registered first, each awaited before the next. A
   * close that fails is logged and the others still close. Runs once; later calls wait for it.
   */
  close(closing: Closing): Promise<void>;
}

interface Registered<T> {
  name: string;
  run: T;
}

export function createLifecycle(logger: Logger): Lifecycle {
  const starts: Registered<() => Promise<unknown>>[] = [];
  const closes: Registered<(closing: Closing) => unknown>[] = [];
  let closed: Promise<void> | undefined;

  async function closeAll(closing: Closing): Promise<void> {
    for (const { name, run } of closes.toReversed()) {
      try {
        await run(closing);
      } catch (error) {
        logger.warn({ err: error, resource: name }, 'a resource failed to close');
      }
    }
  }

  return {
    onStart: (name, run) => void starts.push({ name, run }),
    onClose: (name, run) => void closes.push({ name, run }),
    async start() {
      await Promise.allSettled(starts.map(({ run }) => run()));
    },
    close(closing) {
      closed ??= closeAll(closing);
      return closed;
    },
  };
}

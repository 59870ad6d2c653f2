import { readdir } from 'node:fs/promises';
import { Gauge, type Registry } from 'prom-client';

/*
 * prom-client's default metrics that count the process's descriptors, handles and resources
 * walk every one of them at each scrape, on the event loop. With 10,000 event streams open a
 * scrape held the loop ~40 ms (measured: docs/log/measurements.md): `readdirSync('/proc/self/fd')`
 * 13 ms, `process._getActiveHandles()` called once per gauge of the pair, 18 ms, and
 * `getActiveResourcesInfo()` likewise, 7 ms; every request in flight waited for it. The same
 * five metrics, same names, help and labels, made cheaper: the descriptors are listed by an
 * asynchronous readdir (libuv's thread pool, not the event loop), and the handles and the
 * resources are each listed once per scrape for both gauges of their pair.
 */

/** The metrics of prom-client's defaults that this module makes instead. */
export const PROCESS_COUNT_METRICS = [
  'process_open_fds',
  'nodejs_active_handles',
  'nodejs_active_handles_total',
  'nodejs_active_resources',
  'nodejs_active_resources_total',
] as const;

/**
 * `list()`'s result, taken once for all the collects of one scrape: prom-client starts every
 * metric's collect in the same turn of the event loop, and the copy is dropped before the next.
 */
function oncePerScrape<T>(list: () => T): () => T {
  let taken: { value: T } | undefined;
  return () => {
    if (taken === undefined) {
      taken = { value: list() };
      setImmediate(() => {
        taken = undefined;
      });
    }
    return taken.value;
  };
}

/** How many of each type: a handle's constructor name, a resource's name (as prom-client counts). */
function countByType<T>(items: readonly T[], typeOf: (item: T) => string | undefined) {
  const counts = new Map<string, number>();
  for (const item of items) {
    const type = typeOf(item);
    if (type !== undefined) counts.set(type, (counts.get(type) ?? 0) + 1);
  }
  return counts;
}

function setByType(gauge: Gauge<'type'>, counts: ReadonlyMap<string, number>): void {
  gauge.reset();
  for (const [type, count] of counts) gauge.set({ type }, count);
}

const constructorName = (handle: unknown): string | undefined =>
  (handle as { constructor?: { name?: string } } | null)?.constructor?.name;

/** Replaces prom-client's five counting metrics in `registry` (collectDefaultMetrics ran). */
export function replaceProcessCountMetrics(registry: Registry): void {
  for (const name of PROCESS_COUNT_METRICS) registry.removeSingleMetric(name);
  const registers = [registry];
  if (process.platform === 'linux') {
    new Gauge({
      name: 'process_open_fds',
      help: 'Number of open file descriptors.',
      registers,
      async collect() {
        try {
          // The directory's own descriptor is closed again before the listing returns.
          this.set((await readdir('/proc/self/fd')).length - 1);
        } catch {
          // No /proc to read: the gauge keeps its last value, as prom-client's does.
        }
      },
    });
  }
  // process._getActiveHandles is Node's own (undocumented) list; prom-client reads it too.
  const handles = oncePerScrape(() =>
    (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles(),
  );
  new Gauge({
    name: 'nodejs_active_handles',
    help: 'Number of active libuv handles grouped by handle type. Every handle type is C++ class name.',
    labelNames: ['type'],
    registers,
    collect() {
      setByType(this, countByType(handles(), constructorName));
    },
  });
  new Gauge({
    name: 'nodejs_active_handles_total',
    help: 'Total number of active handles.',
    registers,
    collect() {
      this.set(handles().length);
    },
  });
  const resources = oncePerScrape(() => process.getActiveResourcesInfo());
  new Gauge({
    name: 'nodejs_active_resources',
    help: 'Number of active resources that are currently keeping the event loop alive, grouped by async resource type.',
    labelNames: ['type'],
    registers,
    collect() {
      setByType(
        this,
        countByType(resources(), (name) => name),
      );
    },
  });
  new Gauge({
    name: 'nodejs_active_resources_total',
    help: 'Total number of active resources.',
    registers,
    collect() {
      this.set(resources().length);
    },
  });
}

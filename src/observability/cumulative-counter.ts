import { Counter, type Registry } from 'prom-client';

/**
 * A counter that reports cumulative counts kept elsewhere, by one label (or none: the count
 * under the key ''), read at each scrape.
 */
export function cumulative<S>(
  registry: Registry,
  read: () => S | undefined,
  options: {
    name: string;
    help: string;
    label?: string;
    counts: (status: S) => Readonly<Record<string, number>>;
  },
): void {
  const { label } = options;
  const reported: Record<string, number> = {};
  new Counter({
    name: options.name,
    help: options.help,
    labelNames: label === undefined ? [] : [label],
    registers: [registry],
    collect() {
      const status = read();
      if (status === undefined) return;
      for (const [value, total] of Object.entries(options.counts(status))) {
        const delta = total - (reported[value] ?? 0);
        if (delta > 0 || reported[value] === undefined) {
          if (label === undefined) this.inc(delta);
          else this.inc({ [label]: value }, delta);
        }
        reported[value] = total;
      }
    },
  });
}

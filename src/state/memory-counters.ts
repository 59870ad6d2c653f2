import { LRUCache } from 'lru-cache';
import type { Count, CounterRequest } from './shared-state.js';

interface Window {
  count: number;
  endsAt: number;
}

/**
 * Fixed-window counters in process: the only counters without Redis, and each instance's floor
 * while Redis is away. Bounded in number (least recently used first); a counter is forgotten
 * when its window ends.
 */
export function createMemoryCounters(options: { maxCounters: number; now?: () => number }) {
  const now = options.now ?? Date.now;
  // Made on first use: an LRUCache allocates its whole capacity up front (about 10 ms for
  // 100,000), and an instance with Redis counts in process only while Redis is away.
  let table: LRUCache<string, Window> | undefined;
  const windows = () => (table ??= new LRUCache<string, Window>({ max: options.maxCounters }));
  return {
    count(request: CounterRequest): Count {
      const t = now();
      let window = windows().get(request.key);
      if (window === undefined || window.endsAt <= t) {
        window = { count: 0, endsAt: t + request.windowMs };
        windows().set(request.key, window);
      }
      window.count += 1;
      return { count: window.count, resetMs: window.endsAt - t };
    },
    uncount(request: CounterRequest): void {
      const window = table?.get(request.key);
      if (window !== undefined && window.endsAt > now() && window.count > 0) window.count -= 1;
    },
  };
}
export type MemoryCounters = ReturnType<typeof createMemoryCounters>;

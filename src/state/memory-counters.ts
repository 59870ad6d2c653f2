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
  // Bounded by a size of one per counter, not by `max`: with `max`, lru-cache allocates its
  // whole capacity up front (two arrays of 100,000 filled one by one, 19 ms), which every
  // instance without Redis paid on its first request, and every test gateway with it.
  const windows = new LRUCache<string, Window>({
    maxSize: options.maxCounters,
    sizeCalculation: () => 1,
  });
  return {
    count(request: CounterRequest): Count {
      const t = now();
      let window = windows.get(request.key);
      if (window === undefined || window.endsAt <= t) {
        window = { count: 0, endsAt: t + request.windowMs };
        windows.set(request.key, window);
      }
      window.count += 1;
      return { count: window.count, resetMs: window.endsAt - t };
    },
    uncount(request: CounterRequest): void {
      const window = windows.get(request.key);
      if (window !== undefined && window.endsAt > now() && window.count > 0) window.count -= 1;
    },
  };
}
export type MemoryCounters = ReturnType<typeof createMemoryCounters>;

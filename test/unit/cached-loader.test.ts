import { describe, expect, it } from 'vitest';
import { toRepresentation } from '../../src/cache/cache-entry.js';
import { createCachedLoader } from '../../src/cache/cached-loader.js';
import { createMemoryCacheStore } from '../../src/cache/memory-cache-store.js';
import { createLogCapture } from '../helpers/log-capture.js';

const windows = { ttlSeconds: 100, staleSeconds: 10, staleIfErrorSeconds: 0 };
const load = () => Promise.resolve(toRepresentation({}, 'application/json; charset=utf-8'));

describe('cached loader TTL jitter', () => {
  it.each([
    [0, 90_000],
    [0.5, 100_000],
    [1, 110_000],
  ])(
    'when the random draw is %s with 10 %% jitter, then the entry is fresh for %s ms',
    async (draw, freshMs) => {
      const t = 5_000_000;
      const store = createMemoryCacheStore({ maxBytes: 1 << 20, now: () => t });
      const loader = createCachedLoader({
        store,
        logger: createLogCapture().logger,
        ttlJitterRatio: 0.1,
        now: () => t,
        random: () => draw,
      });
      await loader.get('k', windows, load);
      await loader.settled();
      const entry = await store.get('k');
      expect(entry?.freshUntil).toBe(t + freshMs);
      expect(entry?.staleUntil).toBe(t + freshMs + 10_000);
    },
  );
});

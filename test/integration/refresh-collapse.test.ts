import { describe, expect, it } from 'vitest';
import { toRepresentation, type CacheEntry } from '../../src/cache/cache-entry.js';
import { createCachedLoader } from '../../src/cache/cached-loader.js';
import { createRedisFlights, lockKeyOf } from '../../src/cache/flight-coordinator.js';
import { createBodyLayer } from '../../src/cache/body-layer.js';
import { createRedisCacheStore } from '../../src/cache/redis-cache-store.js';
import { createLogCapture } from '../helpers/log-capture.js';
import { testRedisBreaker, usePrefixedRedis } from '../helpers/test-redis.js';

/*
 * A request that collapses onto a background refresh (contract section 4, one load per key)
 * when the refresh gives up because another holds the key's fleet lock. `npm run chaos` found
 * it around a Redis restart: a stale read started the refresh, the next request's admission
 * found the entry gone and took the lock, collapsed onto the refresh, and got its
 * RefreshedElsewhere as a 500.
 */

const db = usePrefixedRedis({ lazyConnect: true });
const { prefix } = db;

const windows = { ttlSeconds: 60, staleSeconds: 60, staleIfErrorSeconds: 0 };
const JSON_TYPE = 'application/json; charset=utf-8';

describe('a request collapsed onto a background refresh', () => {
  it('when the refresh gives up because the request itself holds the lock, then the request loads with its lock and is answered', async () => {
    const { redis, inspector } = db;
    await redis.connect();
    const logs = createLogCapture();
    const flights = createRedisFlights({
      redis,
      prefix,
      lockMs: 10_000,
      logger: logs.logger,
      breaker: testRedisBreaker(logs.logger),
    });
    await flights.start();
    const now = Date.now();
    const store = createRedisCacheStore({
      redis,
      breaker: testRedisBreaker(logs.logger),
      bodies: createBodyLayer({ maxBytes: 1 << 20 }),
      logger: logs.logger,
    });
    const loader = createCachedLoader({ store, logger: logs.logger, flights });
    const fresh = toRepresentation({ v: 'fresh' }, JSON_TYPE);
    // The load lets go of its representation's body once its write has settled (releaseBody).
    const freshBytes = Buffer.from(fresh.body);
    let loads = 0;
    const load = () => {
      loads += 1;
      return Promise.resolve(fresh);
    };
    const stale: CacheEntry = {
      ...toRepresentation({ v: 'stale' }, JSON_TYPE),
      storedAt: now - 90_000,
      freshUntil: now - 30_000,
      staleUntil: now + 30_000,
      errorUntil: now + 30_000,
    };

    // The second request's admission took the lock when its read found the entry gone.
    const token = 'request-b.1';
    await inspector.set(lockKeyOf('k'), token, 'PX', 10_000);
    // The first request read the stale entry: answered at once, its refresh asks for the lock.
    const first = await loader.get('k', windows, load, { known: { entry: stale } });
    expect(first.cacheStatus).toBe('STALE');
    // The refresh waits for Redis's answer on the lock; the second request arrives meanwhile.
    const second = await loader.get('k', windows, load, {
      known: { entry: undefined, claim: { state: 'ours', token } },
    });
    expect(second.cacheStatus).toBe('MISS');
    expect(second.representation.body.equals(freshBytes)).toBe(true);
    expect(loads).toBe(1);
    await loader.settled();
    // Its write stored the entry and gave the lock back.
    expect(await inspector.exists(lockKeyOf('k'))).toBe(0);
    expect((await store.get('k'))?.body.equals(freshBytes)).toBe(true);
    await flights.close();
  });
});

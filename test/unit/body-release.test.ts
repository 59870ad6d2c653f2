import { setImmediate as afterImmediates } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { toRepresentation, type Representation } from '../../src/cache/cache-entry.js';
import { createCachedLoader } from '../../src/cache/cached-loader.js';
import { createMemoryCacheStore } from '../../src/cache/memory-cache-store.js';
import { createLogCapture } from '../helpers/log-capture.js';

// A load's representation lets go of its body once the load is over (releaseBody in
// cache-entry.ts): what it answered and what it stored keep their bytes, and a late read fails.

const windows = { ttlSeconds: 100, staleSeconds: 10, staleIfErrorSeconds: 0 };
const JSON_TYPE = 'application/json; charset=utf-8';
const value = { items: ['a', 'b'], note: 'en – dash' };
const bytes = Buffer.from(JSON.stringify(value), 'utf8');

function setup() {
  const store = createMemoryCacheStore({ maxBytes: 1 << 20 });
  const loader = createCachedLoader({ store, logger: createLogCapture().logger });
  return { store, loader };
}

describe('a load lets go of its body', () => {
  it('when two requests share a load, then both answer its bytes, the entry keeps them, and the representation lets go once the write has settled', async () => {
    const { store, loader } = setup();
    let finish!: () => void;
    const arrived = new Promise<void>((resolve) => (finish = resolve));
    let loads = 0;
    const load = async (): Promise<Representation> => {
      loads += 1;
      await arrived;
      return toRepresentation(value, JSON_TYPE);
    };
    const first = loader.get('k', windows, load);
    const joined = loader.get('k', windows, load);
    finish();
    const [a, b] = await Promise.all([first, joined]);
    expect(loads).toBe(1);
    expect(b.cacheStatusParams).toBe('fwd=miss; collapsed');
    expect(a.representation.body.equals(bytes)).toBe(true);
    expect(b.representation.body.equals(bytes)).toBe(true);

    await loader.settled();
    await afterImmediates();
    expect(() => a.representation.body).toThrow(/read after its load let go of it/);
    expect(a.representation.digest).toBe(b.representation.digest);
    expect((await store.get('k'))?.body.equals(bytes)).toBe(true);
  });

  it('when a representation is stored without a load (put), then it keeps its body', async () => {
    const { store, loader } = setup();
    const representation = toRepresentation(value, JSON_TYPE);
    await loader.put('k', windows, representation);
    await loader.settled();
    await afterImmediates();
    expect(representation.body.equals(bytes)).toBe(true);
    expect((await store.get('k'))?.body.equals(bytes)).toBe(true);
  });
});

import { setImmediate as afterImmediates } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import {
  releaseBody,
  takeRepresentation,
  toRepresentation,
  type Representation,
} from '../../src/cache/cache-entry.js';
import { createCachedLoader } from '../../src/cache/cached-loader.js';
import { createMemoryCacheStore } from '../../src/cache/memory-cache-store.js';
import { createLogCapture } from '../helpers/log-capture.js';

// A load's representation lets go of its body once its write has settled (instance-loads.ts);
// each request that took the load holds its own (takeRepresentation), for as long as it likes,
// and lets go of that when it has sent it (route-mounter.ts).

const windows = { ttlSeconds: 100, staleSeconds: 10, staleIfErrorSeconds: 0 };
const JSON_TYPE = 'application/json; charset=utf-8';
const value = { items: ['a', 'b'], note: 'en – dash' };
const bytes = Buffer.from(JSON.stringify(value), 'utf8');

function setup() {
  const store = createMemoryCacheStore({ maxBytes: 1 << 20 });
  const loader = createCachedLoader({ store, logger: createLogCapture().logger });
  return { store, loader };
}

/** A load held until `finish`, and the representation it made. */
function heldLoad() {
  let finish!: () => void;
  const arrived = new Promise<void>((resolve) => (finish = resolve));
  const made: Representation[] = [];
  const load = async (): Promise<Representation> => {
    await arrived;
    const representation = toRepresentation(value, JSON_TYPE);
    made.push(representation);
    return representation;
  };
  return { load, made, finish };
}

describe('a load lets go of its body', () => {
  it('when two requests share a load, then the load lets go of its own once its write has settled, and each request still reads its bytes long after', async () => {
    const { store, loader } = setup();
    const { load, made, finish } = heldLoad();
    const first = loader.get('k', windows, load);
    const joined = loader.get('k', windows, load);
    finish();
    const [a, b] = await Promise.all([first, joined]);
    expect(made).toHaveLength(1);
    expect(b.cacheStatusParams).toBe('fwd=miss; collapsed');

    // A request that holds its answer across I/O (the bootstrap route waits for the drafts).
    await loader.settled();
    await afterImmediates();
    expect(() => made[0]!.body).toThrow(/read after its owner let go of it/);
    expect(a.representation.body.equals(bytes)).toBe(true);
    expect(b.representation.body.equals(bytes)).toBe(true);
    expect(a.representation.digest).toBe(made[0]!.digest);
    expect((await store.get('k'))?.body.equals(bytes)).toBe(true);
  });

  it('when one request lets go of its hold, then the other request sharing the load keeps its bytes', async () => {
    const { loader } = setup();
    const { load, finish } = heldLoad();
    const first = loader.get('k', windows, load);
    const joined = loader.get('k', windows, load);
    finish();
    const [a, b] = await Promise.all([first, joined]);
    releaseBody(a.representation);
    expect(() => a.representation.body).toThrow(/read after its owner let go of it/);
    await loader.settled();
    await afterImmediates();
    expect(b.representation.body.equals(bytes)).toBe(true);
  });

  it('when a request takes a stored entry, then it is the entry itself, which nobody lets go of', async () => {
    const { store, loader } = setup();
    const { load, finish } = heldLoad();
    finish();
    await loader.get('k', windows, load);
    await loader.settled();
    const hit = await loader.get('k', windows, load);
    expect(hit.cacheStatus).toBe('HIT');
    expect(takeRepresentation(hit.representation)).toBe(hit.representation);
    releaseBody(hit.representation);
    expect(hit.representation.body.equals(bytes)).toBe(true);
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

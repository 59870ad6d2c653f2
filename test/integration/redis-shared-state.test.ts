import { describe, expect, it } from 'vitest';
import { createBodyLayer } from '../../src/cache/body-layer.js';
import {
  decodeEntry,
  encodeEntry,
  toRepresentation,
  type CacheEntry,
} from '../../src/cache/cache-entry.js';
import { compress } from '../../src/cache/encodings.js';
import { lockKeyOf, waitersKeyOf } from '../../src/cache/flight-coordinator.js';
import { createRedisCacheStore } from '../../src/cache/redis-cache-store.js';
import { createMemoryCounters } from '../../src/state/memory-counters.js';
import { createRedisSharedState } from '../../src/state/redis-shared-state.js';
import { createLogCapture } from '../helpers/log-capture.js';
import { testRedisBreaker, usePrefixedRedis } from '../helpers/test-redis.js';

const db = usePrefixedRedis({ protocol: 2 });
const { prefix } = db;

function setup() {
  const logs = createLogCapture();
  const bodies = createBodyLayer({ maxBytes: 1 << 20 });
  const breaker = () => testRedisBreaker(logs.logger);
  const state = createRedisSharedState({
    redis: db.redis,
    breaker: breaker(),
    fallback: createMemoryCounters({ maxCounters: 100 }),
    bodies,
    logger: logs.logger,
  });
  // The cache store of the same instance: it adds compressed bodies to the layer it shares.
  const cache = createRedisCacheStore({
    redis: db.redis,
    breaker: breaker(),
    bodies,
    logger: logs.logger,
  });
  return { state, cache, bodies, logs };
}

const entryOf = (value: unknown): CacheEntry => ({
  ...toRepresentation(value, 'application/json; charset=utf-8'),
  storedAt: 1,
  freshUntil: Date.now() + 60_000,
  staleUntil: Date.now() + 120_000,
  errorUntil: Date.now() + 180_000,
});

describe('count and read in one round trip', () => {
  it('when counters are bumped, then each reports its count and window, and a guarded one only while its guard exists', async () => {
    const { state } = setup();
    await db.inspector.set('guard:live', '1');
    const counters = [
      { key: 'c:plain', windowMs: 60_000 },
      { key: 'c:live', windowMs: 60_000, guard: 'guard:live' },
      { key: 'c:forged', windowMs: 60_000, guard: 'guard:missing' },
    ];
    await state.countAndRead(counters);
    const { counts } = await state.countAndRead(counters);
    expect(counts[0]?.count).toBe(2);
    expect(counts[0]?.resetMs).toBeGreaterThan(58_000);
    expect(counts[1]?.count).toBe(2);
    expect(counts[2]).toBeUndefined();
    expect(await db.inspector.exists('c:forged')).toBe(0);
  });

  it('when the instance holds the current body, then Redis leaves it out and the held bytes are served', async () => {
    const { state, bodies } = setup();
    const entry = entryOf({ list: 'first' });
    await db.inspector.set('entry:a', encodeEntry(entry));
    const first = await state.countAndRead([], 'entry:a');
    expect(first.entry?.body.equals(entry.body)).toBe(true);
    const held = bodies.get('entry:a');
    expect(held?.digest).toBe(entry.digest);
    const second = await state.countAndRead([], 'entry:a');
    // The very Buffer held in process: the body did not travel again.
    expect(second.entry?.body).toBe(held?.body.identity);
    expect(second.entry?.freshUntil).toBe(entry.freshUntil);
  });

  it('when another instance rewrote the entry, then the new body is served, never the one held (no staleness)', async () => {
    const { state } = setup();
    await db.inspector.set('entry:b', encodeEntry(entryOf({ list: 'old' })));
    await state.countAndRead([], 'entry:b');
    const rewritten = entryOf({ list: 'new' });
    await db.inspector.set('entry:b', encodeEntry(rewritten));
    const { entry } = await state.countAndRead([], 'entry:b');
    expect(entry?.body.toString()).toBe('{"list":"new"}');
    expect(entry?.digest).toBe(rewritten.digest);
  });

  it('when the entry is gone, then it is a miss even though a body is held', async () => {
    const { state } = setup();
    await db.inspector.set('entry:c', encodeEntry(entryOf({ list: 'c' })));
    await state.countAndRead([], 'entry:c');
    await db.inspector.del('entry:c');
    expect((await state.countAndRead([], 'entry:c')).entry).toBeUndefined();
  });

  it('when the stored value is corrupt, then it is a miss with a warning', async () => {
    const { state, logs } = setup();
    await db.inspector.set('entry:d', 'not an entry');
    expect((await state.countAndRead([], 'entry:d')).entry).toBeUndefined();
    expect(logs.text()).toContain('corrupt cache entry');
  });
});

describe('compressed bodies added to a stored entry', () => {
  const big = () => entryOf({ items: Array.from({ length: 300 }, (_, i) => `item ${i}`) });
  const stored = async (key: string) => {
    const raw = await db.inspector.getBuffer(key);
    return raw === null ? undefined : decodeEntry(raw);
  };

  it('when br, then gzip, are added, then each lands in its place, decodes to the identity body, and the expiry stays', async () => {
    const { cache } = setup();
    const entry = big();
    await db.inspector.set('enc:a', encodeEntry(entry), 'PX', 60_000);
    const br = compress(entry.body, 'br');
    const gzip = compress(entry.body, 'gzip');
    await cache.addEncoding('enc:a', entry, { coding: 'gzip', bytes: gzip });
    await cache.addEncoding('enc:a', entry, { coding: 'br', bytes: br });
    const after = await stored('enc:a');
    expect(after?.body.equals(entry.body)).toBe(true);
    expect(after?.encoded?.br?.equals(br)).toBe(true);
    expect(after?.encoded?.gzip?.equals(gzip)).toBe(true);
    expect(after?.freshUntil).toBe(entry.freshUntil);
    expect(after?.digest).toBe(entry.digest);
    const ttl = await db.inspector.pttl('enc:a');
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('when the key holds another entry, or the coding is there already, then nothing is written', async () => {
    const { cache } = setup();
    const entry = big();
    const br = compress(entry.body, 'br');
    await db.inspector.set('enc:b', encodeEntry({ ...entry, storedAt: 2 }), 'PX', 60_000);
    await cache.addEncoding('enc:b', entry, { coding: 'br', bytes: br });
    expect((await stored('enc:b'))?.encoded).toBeUndefined();

    await db.inspector.set('enc:b', encodeEntry({ ...entry, encoded: { br } }), 'PX', 60_000);
    await cache.addEncoding('enc:b', entry, { coding: 'br', bytes: Buffer.from('not br') });
    expect((await stored('enc:b'))?.encoded?.br?.equals(br)).toBe(true);

    await db.inspector.del('enc:b');
    await cache.addEncoding('enc:b', entry, { coding: 'br', bytes: br });
    expect(await db.inspector.exists('enc:b')).toBe(0);
  });

  it('when Redis holds a compressed body the instance lacks, then the read brings it; once held, the header alone comes', async () => {
    const { state, cache, bodies } = setup();
    const entry = big();
    await db.inspector.set('enc:c', encodeEntry(entry), 'PX', 60_000);
    await state.countAndRead([], 'enc:c');
    expect(bodies.get('enc:c')?.body.encoded).toBeUndefined();
    // Another instance adds br (its own store and body layer).
    const other = setup();
    const br = compress(entry.body, 'br');
    await other.cache.addEncoding('enc:c', entry, { coding: 'br', bytes: br });
    const read = await state.countAndRead([], 'enc:c');
    expect(read.entry?.encoded?.br?.equals(br)).toBe(true);
    const held = bodies.get('enc:c');
    expect(held?.body.encoded?.br?.equals(br)).toBe(true);
    // Now the instance holds all Redis has: the body stays home, the held Buffer is served.
    const again = await state.countAndRead([], 'enc:c');
    expect(again.entry?.body).toBe(held?.body.identity);
    expect(again.entry?.encoded?.br).toBe(held?.body.encoded?.br);
    // What this instance adds itself joins its held bodies at once.
    const gzip = compress(entry.body, 'gzip');
    await cache.addEncoding('enc:c', entry, { coding: 'gzip', bytes: gzip });
    expect(bodies.get('enc:c')?.body.encoded?.gzip).toBe(gzip);
    expect((await stored('enc:c'))?.encoded?.gzip?.equals(gzip)).toBe(true);
  });
});

describe("a miss's write with its lock given back", () => {
  it('when a loaded entry is stored with its release, then Redis holds exactly its encoded bytes, the lock is gone and a waiting key is announced', async () => {
    const { cache } = setup();
    const entry = entryOf({ note: 'sent from the answer’s own bytes ✓', items: [1, 2, 3] });
    const key = 'miss:a';
    await db.inspector.set(lockKeyOf(key), 'token-1', 'PX', 60_000);
    await db.inspector.set(waitersKeyOf(key), '1', 'PX', 60_000);
    const listener = db.inspector.duplicate();
    const channel = `${prefix}flight:${key}`;
    const announced = new Promise<string>((resolve) =>
      listener.on('message', (_channel: string, message: string) => resolve(message)),
    );
    await listener.subscribe(channel);
    await cache.set(key, entry, { token: 'token-1', channel });
    expect((await db.inspector.getBuffer(key))?.equals(encodeEntry(entry))).toBe(true);
    expect(await db.inspector.exists(lockKeyOf(key), waitersKeyOf(key))).toBe(0);
    expect(await announced).toBe('1');
    const ttl = await db.inspector.pttl(key);
    expect(ttl).toBeGreaterThan(170_000);
    listener.disconnect();
  });

  it('when the lock is another holder’s, then the entry is stored and that lock stays', async () => {
    const { cache } = setup();
    const entry = entryOf({ items: ['b'] });
    await db.inspector.set(lockKeyOf('miss:b'), 'someone-else', 'PX', 60_000);
    await cache.set('miss:b', entry, { token: 'token-2', channel: `${prefix}flight:miss:b` });
    expect((await db.inspector.getBuffer('miss:b'))?.equals(encodeEntry(entry))).toBe(true);
    expect(await db.inspector.get(lockKeyOf('miss:b'))).toBe('someone-else');
  });
});

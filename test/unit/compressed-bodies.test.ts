import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { createBodyLayer } from '../../src/cache/body-layer.js';
import { toRepresentation, type CacheEntry } from '../../src/cache/cache-entry.js';
import { createCompressingStore } from '../../src/cache/compressing-store.js';
import { encodedBody, withEncodings } from '../../src/cache/encodings.js';
import { createMemoryCacheStore } from '../../src/cache/memory-cache-store.js';

/* Compressed bodies kept with their entries, counted against CACHE_MAX_BYTES (contract 1, 4). */

const representation = () =>
  toRepresentation(
    { items: Array.from({ length: 200 }, (_, i) => ({ id: i, name: `item ${i}` })) },
    'application/json; charset=utf-8',
  );
const windows = { storedAt: 0, freshUntil: 1, staleUntil: 2, errorUntil: Date.now() + 60_000 };
const bytesOf = (entry: CacheEntry) =>
  entry.body.length + (entry.encoded ? entry.encoded.br.length + entry.encoded.gzip.length : 0);

describe('compressed bodies in the stores', () => {
  it('when an entry is written through the compressing store, then it is stored with br and gzip made from the bytes a miss sent', async () => {
    const memory = createMemoryCacheStore({ maxBytes: 1 << 20 });
    const store = createCompressingStore({ store: memory, minBytes: 1024 });
    const fresh = representation();
    // The miss's answer asked for gzip first; the write must take that very compression.
    const sent = await encodedBody(fresh, 'gzip');
    await store.set('k', { ...fresh, ...windows });
    const entry = await store.get('k');
    expect(entry?.encoded?.gzip).toBe(sent);
    expect(gunzipSync(entry!.encoded!.gzip).equals(fresh.body)).toBe(true);
    expect(entry?.encoded?.br.length).toBeGreaterThan(0);
  });

  it('when an entry is under COMPRESSION_MIN_BYTES, then it is stored without compressed bodies', async () => {
    const memory = createMemoryCacheStore({ maxBytes: 1 << 20 });
    const fresh = representation();
    await createCompressingStore({ store: memory, minBytes: fresh.body.length + 1 }).set('k', {
      ...fresh,
      ...windows,
    });
    expect((await memory.get('k'))?.encoded).toBeUndefined();
  });

  it('when the in-process store holds an entry, then every body counts against its budget', async () => {
    const memory = createMemoryCacheStore({ maxBytes: 1 << 20 });
    const entry: CacheEntry = { ...(await withEncodings(representation())), ...windows };
    await memory.set('key', entry);
    expect(memory.health().bytes).toBe(bytesOf(entry) + 'key'.length + 256);
    expect(bytesOf(entry)).toBeGreaterThan(entry.body.length);
  });

  it('when an entry does not fit the budget with its compressed bodies, then it is not kept', async () => {
    const entry: CacheEntry = { ...(await withEncodings(representation())), ...windows };
    const memory = createMemoryCacheStore({ maxBytes: entry.body.length + 300 });
    await memory.set('key', entry);
    expect(await memory.get('key')).toBeUndefined();
  });

  it('when the body layer holds an entry, then it keeps the compressed bodies and counts them', async () => {
    const layer = createBodyLayer({ maxBytes: 1 << 20 });
    const entry: CacheEntry = { ...(await withEncodings(representation())), ...windows };
    layer.set('key', entry);
    const held = layer.get('key');
    expect(held?.digest).toBe(entry.digest);
    expect(held?.body.identity).toBe(entry.body);
    expect(held?.body.encoded).toBe(entry.encoded);
    expect(layer.bytes).toBe(bytesOf(entry) + 'key'.length + 128);
  });
});

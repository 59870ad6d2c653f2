import zlib, { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createBodyLayer } from '../../src/cache/body-layer.js';
import { toRepresentation, type CacheEntry } from '../../src/cache/cache-entry.js';
import { compress, encodedBody, withEncodings } from '../../src/cache/encodings.js';
import { createEncodingsStore } from '../../src/cache/encodings-store.js';
import { createMemoryCacheStore } from '../../src/cache/memory-cache-store.js';

/*
 * Compressed bodies kept with their entries, each made by the first answer that needed it and
 * counted against CACHE_MAX_BYTES (contract 1, 4; docs/reliability.md, Compression, for the departure).
 */

afterEach(() => {
  vi.restoreAllMocks();
});

const representation = () =>
  toRepresentation(
    { items: Array.from({ length: 200 }, (_, i) => ({ id: i, name: `item ${i}` })) },
    'application/json; charset=utf-8',
  );
const windows = { storedAt: 0, freshUntil: 1, staleUntil: 2, errorUntil: Date.now() + 60_000 };
const bytesOf = (entry: CacheEntry) =>
  entry.body.length + (entry.encoded?.br?.length ?? 0) + (entry.encoded?.gzip?.length ?? 0);

describe('compressed bodies in the stores', () => {
  it('when a miss was answered in gzip, then the write stores those very bytes and compresses nothing more', async () => {
    const memory = createMemoryCacheStore({ maxBytes: 1 << 20 });
    const store = createEncodingsStore({ store: memory, minBytes: 1024 });
    const fresh = representation();
    const sent = await encodedBody(fresh, 'gzip');
    const brotli = vi.spyOn(zlib, 'brotliCompressSync');
    const gzip = vi.spyOn(zlib, 'gzipSync');
    await store.set('k', { ...fresh, ...windows });
    const entry = await store.get('k');
    expect(entry?.encoded?.gzip).toBe(sent);
    expect(gunzipSync(entry!.encoded!.gzip!).equals(fresh.body)).toBe(true);
    expect(entry?.encoded?.br).toBeUndefined();
    expect(brotli).not.toHaveBeenCalled();
    expect(gzip).not.toHaveBeenCalled();
  });

  it('when a miss was answered as it is, then the entry is stored with no compressed body and no compression runs', async () => {
    const memory = createMemoryCacheStore({ maxBytes: 1 << 20 });
    const store = createEncodingsStore({ store: memory, minBytes: 1024 });
    const brotli = vi.spyOn(zlib, 'brotliCompressSync');
    const gzip = vi.spyOn(zlib, 'gzipSync');
    await store.set('k', { ...representation(), ...windows });
    expect((await memory.get('k'))?.encoded).toBeUndefined();
    expect(brotli).not.toHaveBeenCalled();
    expect(gzip).not.toHaveBeenCalled();
  });

  it('when a coding is added to the in-process entry, then it is kept once, counted, and never over another entry', async () => {
    const memory = createMemoryCacheStore({ maxBytes: 1 << 20 });
    const entry: CacheEntry = { ...representation(), ...windows };
    await memory.set('k', entry);
    const br = compress(entry.body, 'br');
    await memory.addEncoding('k', entry, { coding: 'br', bytes: br });
    const kept = await memory.get('k');
    expect(kept?.encoded?.br).toBe(br);
    expect(memory.health().bytes).toBe(bytesOf(kept!) + 'k'.length + 256);
    // The first one stays; a second making of the same coding changes nothing.
    await memory.addEncoding('k', entry, { coding: 'br', bytes: Buffer.from('other') });
    expect((await memory.get('k'))?.encoded?.br).toBe(br);
    // An entry stored since (a refresh) is another entry: nothing is added to it.
    const refreshed: CacheEntry = { ...entry, storedAt: 5 };
    await memory.set('k', refreshed);
    await memory.addEncoding('k', entry, { coding: 'gzip', bytes: compress(entry.body, 'gzip') });
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

  it('when a coding is added to the bodies the layer holds, then it joins them, only for the same digest', () => {
    const layer = createBodyLayer({ maxBytes: 1 << 20 });
    const entry: CacheEntry = { ...representation(), ...windows };
    layer.set('key', entry);
    const gzip = compress(entry.body, 'gzip');
    layer.addEncoding('key', 'another-digest', { coding: 'gzip', bytes: gzip });
    expect(layer.get('key')?.body.encoded).toBeUndefined();
    layer.addEncoding('key', entry.digest, { coding: 'gzip', bytes: gzip });
    expect(layer.get('key')?.body.encoded?.gzip).toBe(gzip);
    expect(layer.get('key')?.body.identity).toBe(entry.body);
    expect(layer.bytes).toBe(entry.body.length + gzip.length + 'key'.length + 128);
  });

  it('when the same body is held again (a second whole read), then the first Buffer stays, with the compressed bodies of both', () => {
    const layer = createBodyLayer({ maxBytes: 1 << 20 });
    const first: CacheEntry = { ...representation(), ...windows };
    const gzip = compress(first.body, 'gzip');
    layer.set('key', { ...first, encoded: { gzip } });
    // Another read of the same entry, whole: a copy of the body, and br stored meanwhile.
    const br = compress(first.body, 'br');
    const again = layer.set('key', { ...first, body: Buffer.from(first.body), encoded: { br } });
    expect(again.body.identity).toBe(first.body);
    expect(again.body.encoded).toEqual({ gzip, br });
    expect(layer.get('key')).toBe(again);
    // Another body under the key replaces it whole.
    const other = toRepresentation({ other: true }, 'application/json; charset=utf-8');
    expect(layer.set('key', { ...other, ...windows }).body.identity).toBe(other.body);
  });
});

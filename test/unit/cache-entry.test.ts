import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  decodeEntry,
  encodeEntry,
  entryParts,
  toRepresentation,
  type CacheEntry,
} from '../../src/cache/cache-entry.js';
import { withEncodings, type EncodedBodies } from '../../src/cache/encodings.js';

const entry: CacheEntry = {
  storedAt: 1,
  freshUntil: 2,
  staleUntil: 3,
  errorUntil: 4,
  ...toRepresentation(
    { itemListElement: [], note: 'line\nbreak ✓ 🎧' },
    'application/json; charset=utf-8',
  ),
};
const encoded = encodeEntry(entry);
const edit = (from: string, to: string) => Buffer.from(encoded.toString('utf8').replace(from, to));

describe('cache entry codec', () => {
  it('when an entry is encoded and decoded, then it comes back identical, body bytes and all', () => {
    const decoded = decodeEntry(encoded);
    expect(decoded).toEqual(entry);
    expect(decoded?.body.equals(entry.body)).toBe(true);
  });

  it('when a representation is made, then its digest is the SHA-256 of exactly its bytes', () => {
    expect(entry.body.toString('utf8')).toBe('{"itemListElement":[],"note":"line\\nbreak ✓ 🎧"}');
    expect(entry.digest).toBe('RD6Se2nCkS0nYeKdWOWknnXeCw4UDz2b_25QJWHzo_k');
  });

  it.each([
    ['an empty value', Buffer.alloc(0)],
    ['plain JSON from another writer', Buffer.from('{"a":1}')],
    ['a truncated body', encoded.subarray(0, -3)],
    ['a body with extra bytes', Buffer.concat([encoded, Buffer.from('x')])],
    ['another version', edit('"v":3', '"v":2')],
    ['garbled metadata', edit('"storedAt":1', '"storedAt":"1"')],
    ['metadata that is not JSON', edit('{"v":3,', '{v:3,')],
    // Escaped in the JSON header, so it parses: the allowlist is what refuses it.
    ['a content type with a line break', edit('charset=utf-8', 'charset=utf-8\\r\\nX-Evil: 1')],
    ['a foreign content type', edit('application/json', 'text/html')],
    ['a malformed digest', edit('"digest":"', '"digest":"!')],
  ])('when the stored value is %s, then it is not an entry', (_name, raw) => {
    expect(decodeEntry(raw)).toBeUndefined();
  });
});

describe('cache entry codec with compressed bodies', () => {
  const representation = toRepresentation(
    { items: Array.from({ length: 50 }, (_, i) => i) },
    'application/json; charset=utf-8',
  );
  const stored = async (): Promise<CacheEntry & { encoded: EncodedBodies }> => ({
    ...(await withEncodings(representation)),
    storedAt: 1,
    freshUntil: 2,
    staleUntil: 3,
    errorUntil: 4,
  });

  it('when an entry carries br and gzip bodies, then they come back after the identity body, each decoding to it', async () => {
    const entry = await stored();
    const decoded = decodeEntry(encodeEntry(entry));
    expect(decoded?.body.equals(entry.body)).toBe(true);
    expect(decoded?.encoded?.br?.equals(entry.encoded.br!)).toBe(true);
    expect(decoded?.encoded?.gzip?.equals(entry.encoded.gzip!)).toBe(true);
    expect(brotliDecompressSync(decoded!.encoded!.br!).equals(entry.body)).toBe(true);
    expect(gunzipSync(decoded!.encoded!.gzip!).equals(entry.body)).toBe(true);
  });

  it.each(['br', 'gzip'] as const)(
    'when an entry carries only its %s body (the one coding asked for so far), then that one comes back, and no other',
    async (coding) => {
      const both = await stored();
      const entry: CacheEntry = { ...both, encoded: { [coding]: both.encoded[coding] } };
      const decoded = decodeEntry(encodeEntry(entry));
      expect(decoded?.body.equals(entry.body)).toBe(true);
      expect(Object.keys(decoded?.encoded ?? {})).toEqual([coding]);
      expect(decoded?.encoded?.[coding]?.equals(both.encoded[coding]!)).toBe(true);
    },
  );

  it('when the header line is written, then it keeps "digest":"<digest>" and stays within the 1024 bytes the hit script reads', async () => {
    const big = Number.MAX_SAFE_INTEGER;
    const entry = await stored();
    const raw = encodeEntry({
      ...entry,
      contentType: 'application/ld+json; charset=utf-8',
      storedAt: big,
      freshUntil: big,
      staleUntil: big,
      errorUntil: big,
    });
    const line = raw.subarray(0, raw.indexOf(0x0a) + 1).toString('utf8');
    expect(line).toContain(`"digest":"${entry.digest}"`);
    expect(Buffer.byteLength(line)).toBeLessThan(1024 - 3 * String(big).length);
  });

  it('when the reader holds the bodies, then the header line alone decodes, with the held compressed bodies', async () => {
    const entry = await stored();
    const raw = encodeEntry(entry);
    const header = raw.subarray(0, raw.indexOf(0x0a) + 1);
    const decoded = decodeEntry(header, { identity: entry.body, encoded: entry.encoded });
    expect(decoded?.body).toBe(entry.body);
    expect(decoded?.encoded).toBe(entry.encoded);
    expect(decodeEntry(header, { identity: entry.body.subarray(1) })).toBeUndefined();
  });

  it.each([
    ['a truncated gzip body', (raw: Buffer) => raw.subarray(0, -1)],
    ['a body with extra bytes', (raw: Buffer) => Buffer.concat([raw, Buffer.from('x')])],
    [
      'a gzip length that leaves its gzip body out',
      (raw: Buffer) =>
        Buffer.from(raw.toString('latin1').replace(/"gzipLength":\d+/, '"gzipLength":0'), 'latin1'),
    ],
  ])('when the stored value has %s, then it is not an entry', async (_name, damage) => {
    expect(decodeEntry(damage(encodeEntry(await stored())))).toBeUndefined();
  });
});

describe("cache entry codec: a write's two parts", () => {
  it('when an entry without compressed bodies is split for a write, then its bodies part is the very Buffer it was sent from, and header and bodies are the encoded bytes', () => {
    const { header, bodies } = entryParts(entry);
    expect(bodies).toBe(entry.body);
    expect(Buffer.concat([Buffer.from(header), bodies]).equals(encoded)).toBe(true);
  });

  it('when an entry with compressed bodies is split, then header and bodies are still the encoded bytes', async () => {
    const full = await withEncodings(entry);
    const { header, bodies } = entryParts(full);
    const joined = Buffer.concat([Buffer.from(header), bodies]);
    expect(joined.equals(encodeEntry(full))).toBe(true);
    expect(decodeEntry(joined)?.encoded?.br?.equals(full.encoded.br!)).toBe(true);
    expect(decodeEntry(joined)?.encoded?.gzip?.equals(full.encoded.gzip!)).toBe(true);
  });
});

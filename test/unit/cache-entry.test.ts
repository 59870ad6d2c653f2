import { describe, expect, it } from 'vitest';
import { decodeEntry, encodeEntry, type CacheEntry } from '../../src/cache/cache-entry.js';

const entry: CacheEntry = {
  storedAt: 1,
  freshUntil: 2,
  staleUntil: 3,
  errorUntil: 4,
  contentType: 'application/json; charset=utf-8',
  body: '{"itemListElement":[],"note":"line\\nbreak ✓ 🎧"}\n',
};

describe('cache entry codec', () => {
  it('when an entry is encoded and decoded, then it comes back identical', () => {
    expect(decodeEntry(encodeEntry(entry))).toEqual(entry);
  });

  it.each([
    ['an empty string', ''],
    ['plain JSON from another writer', '{"a":1}'],
    ['a truncated body', encodeEntry(entry).slice(0, -3)],
    ['a body with extra bytes', `${encodeEntry(entry)}x`],
    ['another version', encodeEntry(entry).replace('"v":1', '"v":2')],
    ['garbled metadata', encodeEntry(entry).replace('"storedAt":1', '"storedAt":"1"')],
    ['metadata that is not JSON', encodeEntry(entry).replace('{"v":1,', '{v:1,')],
  ])('when the stored value is %s, then it is not an entry', (_name, raw) => {
    expect(decodeEntry(raw)).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import {
  decodeEntry,
  encodeEntry,
  toRepresentation,
  type CacheEntry,
} from '../../src/cache/cache-entry.js';

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
    ['another version', edit('"v":2', '"v":1')],
    ['garbled metadata', edit('"storedAt":1', '"storedAt":"1"')],
    ['metadata that is not JSON', edit('{"v":2,', '{v:2,')],
    // Escaped in the JSON header, so it parses: the allowlist is what refuses it.
    ['a content type with a line break', edit('charset=utf-8', 'charset=utf-8\\r\\nX-Evil: 1')],
    ['a foreign content type', edit('application/json', 'text/html')],
    ['a malformed digest', edit('"digest":"', '"digest":"!')],
  ])('when the stored value is %s, then it is not an entry', (_name, raw) => {
    expect(decodeEntry(raw)).toBeUndefined();
  });
});

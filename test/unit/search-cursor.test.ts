import { describe, expect, it } from 'vitest';
import { createCursorCodec } from '../../src/features/search/search-cursor.js';

const codec = createCursorCodec({
  secret: 'k'.repeat(32),
  searchBaseUrl: 'https://search.example.test/svc',
});
const forge = (payload: object, sig = 'AAAA') =>
  `${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${sig}`;

describe('cursor codec', () => {
  it('when the upstream next is a search on our origin, then the cursor decodes to its query and sort', () => {
    const cursor = codec.encode(
      'https://search.example.test/svc/v1/search?q=a+b&k=10&start=10',
      'price_asc',
    );
    expect(cursor).toBeDefined();
    expect(codec.decode(cursor!)).toEqual({ query: 'q=a+b&k=10&start=10', sort: 'price_asc' });
  });

  it.each([
    ['another host', 'https://evil.test/svc/v1/search?q=a'],
    ['userinfo trick', 'https://search.example.test@evil.test/svc/v1/search?q=a'],
    ['userinfo on our host', 'https://u:p@search.example.test/svc/v1/search?q=a'],
    ['another path', 'https://search.example.test/svc/v1/url?q=a'],
    ['outside the base path', 'https://search.example.test/v1/search?q=a'],
    ['another scheme', 'http://search.example.test/svc/v1/search?q=a'],
  ])('when the upstream next points at %s, then no cursor is made', (_name, next) => {
    expect(codec.encode(next, 'relevance')).toBeUndefined();
  });

  it.each([
    ['garbage', 'not-a-cursor'],
    ['empty parts', '.'],
    ['three parts', 'a.b.c'],
    [
      'a forged signature',
      forge({ v: 1, o: 'https://search.example.test/svc', q: 'q=a', s: 'relevance' }),
    ],
  ])('when the cursor is %s, then decoding fails with INVALID_CURSOR', (_name, cursor) => {
    expect(() => codec.decode(cursor)).toThrow(expect.objectContaining({ code: 'INVALID_CURSOR' }));
  });

  it('when a cursor was signed for another search origin, then it is rejected', () => {
    const other = createCursorCodec({
      secret: 'k'.repeat(32),
      searchBaseUrl: 'https://evil.test/svc',
    });
    const cursor = other.encode('https://evil.test/svc/v1/search?q=a', 'relevance')!;
    expect(() => codec.decode(cursor)).toThrow(/another search service/);
  });

  it('when a cursor is tampered with after signing, then it is rejected', () => {
    const cursor = codec.encode('https://search.example.test/svc/v1/search?q=a&k=10', 'relevance')!;
    const [payload, sig] = cursor.split('.');
    const json = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as { q: string };
    json.q = 'q=a&k=100000';
    expect(() => codec.decode(forge(json, sig))).toThrow(/not issued by this gateway/);
  });
});

import { createHmac } from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createSearchSimulator,
  type SearchSimulator,
} from '../../simulators/search/search-simulator.js';
import {
  CURSOR_SECRET,
  SEARCH_TOKEN,
  createTestGateway,
  type TestGateway,
} from '../helpers/test-gateway.js';
import { errorPaths, expectProblem, useUpstreams } from './hostile-helpers.js';

/*
 * Forged next-page cursors (contract section 5): anything that does not decode to a search on
 * the configured origin is 400 INVALID_CURSOR (VALIDATION_FAILED for a malformed parameter)
 * and causes no outbound connection, whatever it names.
 */

const upstreams = useUpstreams();

/** A second search service, as a staging gateway sharing the production secret would use. */
let otherSearch: SearchSimulator;
beforeAll(async () => {
  otherSearch = createSearchSimulator({ clientToken: SEARCH_TOKEN });
  await otherSearch.listen();
});
afterAll(() => otherSearch.close());

const b64 = (text: string) => Buffer.from(text).toString('base64url');
const sign = (payload: string, secret = CURSOR_SECRET) =>
  createHmac('sha256', secret).update(payload).digest('base64url');
/** A cursor over any JSON text, correctly signed with the test gateway's own secret. */
const signed = (json: string) => `${b64(json)}.${sign(b64(json))}`;
const payload = (fields: Record<string, unknown>) =>
  JSON.stringify({ v: 1, q: 'q=headphones&k=2&start=2', s: 'relevance', ...fields });

/** The next cursor a gateway hands out for a first page. */
async function cursorFrom(gw: TestGateway): Promise<string> {
  const res = await request(gw.app).get('/api/search?q=headphones&k=2');
  expect(res.status).toBe(200);
  const next = (res.body as { next: string }).next;
  return new URL(next, 'http://gateway.test').searchParams.get('cursor')!;
}

/** Asks the gateway for a cursor page after forgetting what the upstreams saw so far. */
async function follow(gw: TestGateway, cursor: string) {
  upstreams.search.requests.length = 0;
  otherSearch.requests.length = 0;
  return request(gw.app).get(`/api/search?cursor=${encodeURIComponent(cursor)}`);
}

function expectNoOutbound() {
  expect(upstreams.calls()).toEqual([]);
  expect(otherSearch.requests).toEqual([]);
}

describe('forged cursors', () => {
  type Forge = (ctx: { valid: string; origin: string }) => string;
  const flip = (c: string) => (c === 'A' ? 'B' : 'A');

  it.each<[string, Forge]>([
    ['garbage', () => 'not-a-cursor'],
    ['an empty payload and signature', () => '.'],
    ['three parts', () => 'a.b.c'],
    ['a bare URL', ({ origin }) => `${origin}/v1/search?q=headphones`],
    ['a userinfo URL', () => 'https://search@evil.test/v1/search?q=a'],
    [
      'base64 of a payload for another host, unsigned',
      () => `${b64(payload({ o: 'https://evil.test' }))}.AAAA`,
    ],
    [
      'base64 of a payload for our host, with a made-up signature',
      ({ origin }) => `${b64(payload({ o: origin }))}.${'A'.repeat(43)}`,
    ],
    ['a signed payload for another host', () => signed(payload({ o: 'https://evil.test' }))],
    [
      'a signed payload with a userinfo host',
      () => signed(payload({ o: 'https://search@evil.test' })),
    ],
    [
      'a signed payload with userinfo after our origin',
      ({ origin }) => signed(payload({ o: `${origin}@evil.test` })),
    ],
    [
      'a signed payload whose origin only starts like ours',
      ({ origin }) => signed(payload({ o: `${origin}.evil.test` })),
    ],
    [
      'a signed payload with a CRLF in the query',
      ({ origin }) => signed(payload({ o: origin, q: 'q=a\r\nHost: evil.test' })),
    ],
    [
      'a signed payload with a fragment',
      ({ origin }) => signed(payload({ o: origin, q: 'q=a#@evil.test' })),
    ],
    ['a signed payload with an empty query', ({ origin }) => signed(payload({ o: origin, q: '' }))],
    [
      'a signed payload with a prototype sort',
      ({ origin }) => signed(payload({ o: origin, s: 'constructor' })),
    ],
    [
      'a signed payload with a __proto__ key',
      ({ origin }) => signed(payload({ o: origin }).replace('{', '{"__proto__":{"x":1},')),
    ],
    ['a signed payload of version 2', ({ origin }) => signed(payload({ o: origin, v: 2 }))],
    ['a signed payload that is not JSON', () => signed('q=headphones')],
    [
      'a tampered signature',
      ({ valid }) => {
        const [p, s] = valid.split('.') as [string, string];
        return `${p}.${flip(s[0]!)}${s.slice(1)}`;
      },
    ],
    ['a truncated signature', ({ valid }) => valid.slice(0, -1)],
    [
      'a tampered payload asking for k=100',
      ({ valid, origin }) => {
        const s = valid.split('.')[1]!;
        return `${b64(payload({ o: origin, q: 'q=headphones&k=100&start=2' }))}.${s}`;
      },
    ],
    ['payload and signature swapped', ({ valid }) => valid.split('.').reverse().join('.')],
    ['a cursor with an inner space', ({ valid }) => `${valid.slice(0, 10)} ${valid.slice(10)}`],
  ])(
    'when the cursor is %s, then it is 400 INVALID_CURSOR with no upstream call',
    async (_name, forge) => {
      const gw = await upstreams.serviceGateway();
      const valid = await cursorFrom(gw);
      const res = await follow(gw, forge({ valid, origin: upstreams.search.origin }));
      expectProblem(res, 400, 'INVALID_CURSOR');
      expectNoOutbound();
    },
  );

  it('when a cursor comes from a gateway with another CURSOR_SECRET, then it is 400 INVALID_CURSOR with no upstream call', async () => {
    const other = await upstreams.serviceGateway('administrator', {
      CURSOR_SECRET: 'another-cursor-secret-0123456789abcdef',
    });
    const gw = await upstreams.serviceGateway();
    const res = await follow(gw, await cursorFrom(other));
    expectProblem(res, 400, 'INVALID_CURSOR');
    expectNoOutbound();
  });

  it('when a cursor comes from a gateway on another search service with the same secret, then it is 400 with no call to either', async () => {
    const gw = await upstreams.serviceGateway();
    const staging = await createTestGateway({ searchOrigin: otherSearch.origin });
    try {
      const res = await follow(gw, await cursorFrom(staging));
      expectProblem(res, 400, 'INVALID_CURSOR');
      expectNoOutbound();
    } finally {
      await staging.close();
    }
  });

  it.each([
    ['over-long (4097 characters)', () => `${'A'.repeat(4000)}.${'B'.repeat(96)}`, 'query.cursor'],
    ['empty', () => '', 'query.cursor'],
  ])(
    'when the cursor is %s, then it is 400 VALIDATION_FAILED with no upstream call',
    async (_name, make, path) => {
      const gw = await upstreams.serviceGateway();
      const res = await follow(gw, make());
      const body = expectProblem(res, 400, 'VALIDATION_FAILED');
      expect(errorPaths(body)).toEqual([path]);
      expectNoOutbound();
    },
  );

  it.each([
    ['q', 'q=headphones'],
    ['k', 'k=5'],
    ['sort', 'sort=rating'],
  ])(
    'when a valid cursor comes with %s, then it is 400 VALIDATION_FAILED with no upstream call',
    async (name, extra) => {
      const gw = await upstreams.serviceGateway();
      const valid = await cursorFrom(gw);
      upstreams.search.requests.length = 0;
      const res = await request(gw.app).get(`/api/search?cursor=${valid}&${extra}`);
      const body = expectProblem(res, 400, 'VALIDATION_FAILED');
      expect(errorPaths(body)).toEqual([`query.${name}`]);
      expectNoOutbound();
    },
  );

  /** The last base64url character of a 32-byte HMAC carries two bits that decode to nothing. */
  const lastCharTwin = (c: string) => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const index = alphabet.indexOf(c);
    return alphabet[index ^ 1]!;
  };

  it.each<[string, (valid: string) => string]>([
    ['trailing base64 padding', (valid) => `${valid}=`],
    ['a trailing NUL', (valid) => `${valid}\u0000`],
    ['a trailing newline', (valid) => `${valid}\n`],
    [
      'the unused low bits of the last character flipped',
      (valid) => valid.slice(0, -1) + lastCharTwin(valid.at(-1)!),
    ],
  ])(
    'when a genuine cursor is re-encoded with %s, then it is 400 with no outbound call',
    async (_name, reencode) => {
      const gw = await upstreams.serviceGateway();
      const valid = await cursorFrom(gw);
      const variant = reencode(valid);
      expect(variant).not.toBe(valid);
      upstreams.search.requests.length = 0;
      const res = await follow(gw, variant);
      // Node's base64url decoder is lenient; the gateway accepts only the canonical spelling.
      expectProblem(res, 400, 'INVALID_CURSOR');
      expectNoOutbound();
    },
  );

  it('when the genuine cursor is followed, then the configured search service gets exactly its next page', async () => {
    const gw = await upstreams.serviceGateway();
    const res = await follow(gw, await cursorFrom(gw));
    expect(res.status).toBe(200);
    expect(upstreams.search.requests.map((r) => r.url)).toEqual([
      '/v1/search?q=headphones&k=2&start=2',
    ]);
    expect(otherSearch.requests).toEqual([]);
  });
});

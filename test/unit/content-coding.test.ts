import { describe, expect, it } from 'vitest';
import { chooseEncoding } from '../../src/http/content-coding.js';

/* Accept-Encoding negotiation (contract section 4, RFC 9110 §12.5.3). */

describe('choosing a content coding', () => {
  it.each([
    // No preference stated.
    [undefined, 'identity'],
    ['', 'identity'],
    ['   ', 'identity'],
    // br before gzip at equal weight, whatever order the client lists them in.
    ['gzip, br', 'br'],
    ['br, gzip', 'br'],
    ['gzip, deflate, br, zstd', 'br'],
    ['gzip, deflate', 'gzip'],
    ['gzip', 'gzip'],
    ['br', 'br'],
    // The highest weight wins.
    ['br;q=0.5, gzip', 'gzip'],
    ['br;q=0.9, gzip;q=0.8, identity;q=0.5', 'br'],
    ['gzip;q=1.0, br;q=0.999', 'gzip'],
    ['br;q=0.001, identity;q=0', 'br'],
    // identity competes like any coding, at 1 unless the header says otherwise.
    ['gzip;q=0.5', 'identity'],
    ['br;q=0.9', 'identity'],
    ['br;q=0.9, gzip;q=0.8', 'identity'],
    ['identity', 'identity'],
    ['identity, gzip', 'gzip'],
    ['identity;q=1, br;q=1', 'br'],
    ['identity;q=0.5, gzip;q=0.6', 'gzip'],
    ['identity;q=0.7, gzip;q=0.6', 'identity'],
    ['identity;q=0, gzip;q=0.1', 'gzip'],
    // A coding refused outright is never chosen.
    ['br;q=0, gzip', 'gzip'],
    ['br;q=0, gzip;q=0', 'identity'],
    // Nothing acceptable at all: identity rather than 406 (the decision in content-coding.ts).
    ['identity;q=0, gzip;q=0', 'identity'],
    ['identity;q=0', 'identity'],
    ['*;q=0', 'identity'],
    ['identity;q=0, *;q=0', 'identity'],
    // `*` stands for every coding not listed, identity included.
    ['*', 'br'],
    ['*;q=0.5', 'br'],
    ['gzip, *;q=0.5', 'gzip'],
    ['br;q=0, *', 'gzip'],
    ['br;q=0, gzip;q=0, *', 'identity'],
    ['*;q=0, gzip', 'gzip'],
    ['*;q=0.1, identity;q=0.5', 'identity'],
    ['identity;q=0, *;q=0.2', 'br'],
    // Codings the gateway does not make are ignored.
    ['deflate', 'identity'],
    ['zstd, deflate;q=1, compress', 'identity'],
    ['zstd;q=1, gzip;q=0.2', 'identity'],
    ['zstd, gzip;q=0.2, identity;q=0.1', 'gzip'],
    // Spelling: case, whitespace, x-gzip, empty elements.
    ['GZIP;Q=0.5, BR;Q=0.6, IDENTITY;Q=0.1', 'br'],
    ['  gzip ;  q=0.5 ,br ; q = 0.4', 'identity'],
    ['x-gzip', 'gzip'],
    [',, gzip ,', 'gzip'],
    // A malformed weight discards its element.
    ['br;q=2, gzip', 'gzip'],
    ['br;q=abc, gzip;q=0.5', 'identity'],
    ['br;q=0.5000, gzip;q=0.4, identity;q=0', 'gzip'],
    ['br;q=-1', 'identity'],
    // Listed twice: the lower weight counts.
    ['br, br;q=0', 'identity'],
    ['gzip;q=0, x-gzip', 'identity'],
  ] as const)('when Accept-Encoding is %j, then the answer is %s', (header, coding) => {
    expect(chooseEncoding(header)).toBe(coding);
  });
});

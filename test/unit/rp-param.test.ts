import { describe, expect, it } from 'vitest';
import { createRedirectUrlMatcher, readRp, withRp } from '../../src/features/search/rp-param.js';

const BASE = 'https://search.example.test/svc';

describe('withRp', () => {
  const cases: [string, string, string][] = [
    ['a plain rp', `${BASE}/v1/url?pid=7&rp=3&u=x`, `${BASE}/v1/url?pid=7&rp=9&u=x`],
    ['rp first', `${BASE}/v1/url?rp=3&pid=7`, `${BASE}/v1/url?rp=9&pid=7`],
    ['duplicate rp', `${BASE}/v1/url?rp=3&a=1&rp=4`, `${BASE}/v1/url?rp=9&a=1&rp=9`],
    [
      'rp%3D5 inside another value',
      `${BASE}/v1/url?u=a%26rp%3D5&rp=3`,
      `${BASE}/v1/url?u=a%26rp%3D5&rp=9`,
    ],
    [
      'a parameter ending in rp',
      `${BASE}/v1/url?arp=3&rpx=4&rp=5`,
      `${BASE}/v1/url?arp=3&rpx=4&rp=9`,
    ],
    ['+ and %20 kept as given', `${BASE}/v1/url?q=a+b%20c&rp=1`, `${BASE}/v1/url?q=a+b%20c&rp=9`],
    [
      'lowercase escapes kept',
      `${BASE}/v1/url?u=https%3a%2f%2fx&rp=1`,
      `${BASE}/v1/url?u=https%3a%2f%2fx&rp=9`,
    ],
    ['flags without =', `${BASE}/v1/url?flag&rp=1&other`, `${BASE}/v1/url?flag&rp=9&other`],
    ['a bare rp flag has no value to change', `${BASE}/v1/url?rp&x=1`, `${BASE}/v1/url?rp&x=1`],
    [
      'fragment kept, rp inside it untouched',
      `${BASE}/v1/url?rp=1#rp=2&x`,
      `${BASE}/v1/url?rp=9#rp=2&x`,
    ],
    ['empty segments kept', `${BASE}/v1/url?&&rp=1&`, `${BASE}/v1/url?&&rp=9&`],
    ['no query at all', `${BASE}/v1/url`, `${BASE}/v1/url`],
    ['a ? only inside the fragment', `${BASE}/v1/url#x?rp=1`, `${BASE}/v1/url#x?rp=1`],
    ['an empty rp value', `${BASE}/v1/url?rp=&x=1`, `${BASE}/v1/url?rp=9&x=1`],
    ['rp last, before a fragment', `${BASE}/v1/url?x=1&rp=12#f`, `${BASE}/v1/url?x=1&rp=9#f`],
    ['encoded name is not rp', `${BASE}/v1/url?r%70=1&RP=2`, `${BASE}/v1/url?r%70=1&RP=2`],
  ];
  it.each(cases)('when the URL has %s, then only rp values change', (_name, input, expected) => {
    expect(withRp(input, '9')).toBe(expected);
  });
});

describe('readRp', () => {
  it('when rp appears twice, then the first value is read', () => {
    expect(readRp(`${BASE}/v1/url?x=1&rp=4&rp=5`)).toBe('4');
  });
  it('when rp only appears in the fragment or inside a value, then there is none', () => {
    expect(readRp(`${BASE}/v1/url?u=rp%3D5#rp=3`)).toBeUndefined();
    expect(readRp(`${BASE}/v1/url#x?rp=3`)).toBeUndefined();
  });
  it('when rp is last before the fragment, then its value stops at the #', () => {
    expect(readRp(`${BASE}/v1/url?x=1&rp=12#f`)).toBe('12');
  });
  it('when rp is a bare flag or empty, then there is no value, or an empty one', () => {
    expect(readRp(`${BASE}/v1/url?rp&x=1`)).toBeUndefined();
    expect(readRp(`${BASE}/v1/url?rp=&x=1`)).toBe('');
  });
});

describe('createRedirectUrlMatcher', () => {
  const matches = createRedirectUrlMatcher(BASE);
  it.each([
    [`${BASE}/v1/url?rp=1`, true],
    [`${BASE}/v1/url`, true],
    ['https://search.example.test/v1/url?rp=1', false], // outside the base path
    [`${BASE}/v1/urls?rp=1`, false],
    [`${BASE}/v1/url/x?rp=1`, false],
    ['https://user@search.example.test/svc/v1/url?rp=1', false],
    ['https://search.example.test.evil.test/svc/v1/url?rp=1', false],
    ['http://search.example.test/svc/v1/url?rp=1', false], // other scheme, other origin
    ['https://search.example.test:8443/svc/v1/url?rp=1', false],
    ['/svc/v1/url?rp=1', false],
    ['https://img.example.test/p.jpg?rp=1', false],
    ['not a url', false],
  ])('when the URL is %s, then it matches: %s', (url, expected) => {
    expect(matches(url)).toBe(expected);
  });
});

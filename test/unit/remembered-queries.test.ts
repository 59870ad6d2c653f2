import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors/app-error.js';
import { createInputReader } from '../../src/http/route-mount.js';
import { ROUTES } from '../../src/features/route-table.js';

/*
 * The search route's reader remembers the validated form of the raw query strings asked lately
 * (route-mount.ts): a popular search is validated and keyed once. What it hands out must be what
 * a fresh validation would give, frozen (shared by every request with the same string), and a
 * refusal must never be remembered as an answer.
 */

const reader = () => createInputReader(ROUTES.search, { maxK: 10 });
/** A fresh request each time: the prepared slot is per request. */
const request = () => ({ headers: {} }) as IncomingMessage;
const queryOf = (prepared: ReturnType<ReturnType<typeof reader>['prepare']>) => {
  if ('error' in prepared) throw prepared.error;
  return prepared.input.query;
};

describe('remembered queries', () => {
  it('when requests repeat a raw query, then from the second on they get the same frozen input, equal to a fresh validation', () => {
    const first = reader();
    const once = queryOf(first.prepare(request(), 'q=desk%20lamp&k=3'));
    // The first sight only notes the string: a search nobody repeats keeps nothing alive.
    expect(Object.isFrozen(once)).toBe(false);
    const a = queryOf(first.prepare(request(), 'q=desk%20lamp&k=3'));
    const b = queryOf(first.prepare(request(), 'q=desk%20lamp&k=3'));
    expect(b).toBe(a);
    expect(once).toEqual(a);
    expect(Object.isFrozen(a)).toBe(true);
    expect(a).toEqual(queryOf(reader().prepare(request(), 'q=desk%20lamp&k=3')));
    expect(a).toEqual({ kind: 'query', q: 'desk lamp', k: 3, sort: 'relevance' });
  });

  it('when the raw queries differ, then so do the inputs', () => {
    const r = reader();
    for (const raw of ['q=desk&k=3', 'q=desk&k=4']) r.prepare(request(), raw);
    const a = queryOf(r.prepare(request(), 'q=desk&k=3'));
    const b = queryOf(r.prepare(request(), 'q=desk&k=4'));
    expect(a).not.toBe(b);
    expect(b).toMatchObject({ k: 4 });
  });

  it('when a raw query is invalid, then every request with it is refused with the same message', () => {
    const r = reader();
    for (let i = 0; i < 3; i += 1) {
      const prepared = r.prepare(request(), 'q=desk&k=99');
      expect('error' in prepared && prepared.error).toBeInstanceOf(AppError);
      expect('error' in prepared && (prepared.error as AppError).code).toBe('VALIDATION_FAILED');
      expect(() => queryOf(prepared)).toThrow(/k must be a whole number from 1 to 10/);
    }
  });

  it('when a raw query is longer than the reader keys by, then it is still validated, each time afresh', () => {
    const r = reader();
    // Unknown parameters are dropped: the string is long, the query valid.
    const long = `q=${'a'.repeat(450)}&k=3&pad=${'x'.repeat(100)}`;
    const [a, b, c] = [1, 2, 3].map(() => queryOf(r.prepare(request(), long)));
    expect(c).toEqual(a);
    expect(c).not.toBe(b);
    expect(Object.isFrozen(c)).toBe(false);
  });
});

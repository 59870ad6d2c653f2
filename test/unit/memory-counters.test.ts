import { describe, expect, it } from 'vitest';
import { createMemoryCounters } from '../../src/state/memory-counters.js';

/** A clock the test moves. */
function clock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe('in-process counters', () => {
  it('when a key is counted within its window, then the count grows and the reset shrinks', () => {
    const time = clock();
    const counters = createMemoryCounters({ maxCounters: 10, now: time.now });
    const request = { key: 'a', windowMs: 60_000 };
    expect(counters.count(request)).toEqual({ count: 1, resetMs: 60_000 });
    time.advance(20_000);
    expect(counters.count(request)).toEqual({ count: 2, resetMs: 40_000 });
  });

  it('when the window has ended, then the next count starts a new window at 1', () => {
    const time = clock();
    const counters = createMemoryCounters({ maxCounters: 10, now: time.now });
    const request = { key: 'a', windowMs: 1000 };
    counters.count(request);
    counters.count(request);
    time.advance(1000);
    expect(counters.count(request)).toEqual({ count: 1, resetMs: 1000 });
  });

  it('when a count is given back, then it goes down by one, never below zero', () => {
    const time = clock();
    const counters = createMemoryCounters({ maxCounters: 10, now: time.now });
    const request = { key: 'a', windowMs: 1000 };
    counters.count(request);
    counters.uncount(request);
    counters.uncount(request);
    expect(counters.count(request).count).toBe(1);
  });

  it('when more keys are counted than the bound, then the least recently used is forgotten', () => {
    const time = clock();
    const counters = createMemoryCounters({ maxCounters: 3, now: time.now });
    const windowMs = 60_000;
    for (const key of ['a', 'b', 'c']) counters.count({ key, windowMs });
    // 'a' used again: 'b' is now the least recently used.
    expect(counters.count({ key: 'a', windowMs }).count).toBe(2);
    counters.count({ key: 'd', windowMs });
    expect(counters.count({ key: 'b', windowMs }).count).toBe(1);
    expect(counters.count({ key: 'a', windowMs }).count).toBe(3);
  });
});

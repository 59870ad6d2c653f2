import { describe, expect, it } from 'vitest';
import { createLogThrottle } from '../../src/logging/log-throttle.js';
import { createLogCapture } from '../helpers/log-capture.js';

describe('log throttle', () => {
  it('when a kind repeats within its window, then one line is logged and the rest are counted into the next', () => {
    let t = 0;
    const logs = createLogCapture();
    const throttle = createLogThrottle(logs.logger, { windowMs: 1000, now: () => t });
    for (let i = 0; i < 5; i += 1) throttle.warn('redis', { i }, 'redis failed');
    t = 1000;
    throttle.warn('redis', { i: 5 }, 'redis failed');
    const lines = logs
      .text()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { suppressed?: number });
    expect(lines).toHaveLength(2);
    expect(lines[0]?.suppressed).toBeUndefined();
    expect(lines[1]?.suppressed).toBe(4);
  });

  it('when kinds name many keys over time, then those with nothing to report are forgotten', () => {
    let t = 0;
    const logs = createLogCapture();
    const throttle = createLogThrottle(logs.logger, { windowMs: 1000, now: () => t });
    for (let i = 0; i < 5000; i += 1) {
      t += 10;
      throttle.warn(`refresh:key-${i}`, {}, 'refresh failed');
    }
    // Kinds of the last window are kept; the map never held all 5,000.
    expect(throttle.kinds()).toBeLessThanOrEqual(1001);
    expect(throttle.kinds()).toBeGreaterThanOrEqual(100);
  });
});

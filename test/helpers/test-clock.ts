/**
 * A clock a test moves instead of waiting: hand `now` to the gateway (createTestGateway's
 * `now`) and call `advance` to let a TTL, a stale window or an idle timeout pass at once.
 * It starts at the real time, so what it stamps (expiry dates, Redis PX) stays plausible.
 */
export interface TestClock {
  readonly now: () => number;
  advance(ms: number): void;
}

export function createTestClock(start = Date.now()): TestClock {
  let t = start;
  return {
    now: () => t,
    advance(ms) {
      if (!(ms >= 0)) throw new Error(`a clock only moves forward, not by ${ms} ms`);
      t += ms;
    },
  };
}

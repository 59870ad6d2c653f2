import type { Logger } from 'pino';

/**
 * Repeated warnings, rate-limited: the first of a kind is logged at once, the rest of its
 * window only counted and reported (`suppressed`) with the next one logged. A flood of the
 * same fault (a Redis that refuses writes, a client sending garbage) costs a line per window,
 * not a line per request. Kinds may name a key (a background refresh of one entry), so kinds
 * whose window has passed with nothing suppressed are forgotten once there are many of them.
 */
export interface LogThrottle {
  /** `via`: the request's logger when it happened in one, so the line carries its id. */
  warn(kind: string, fields: Record<string, unknown>, message: string, via?: Logger): void;
  info(kind: string, fields: Record<string, unknown>, message: string, via?: Logger): void;
  /** How many kinds it remembers (tests: the map stays bounded). */
  kinds(): number;
}

/** Kinds remembered before those with nothing left to report are swept. */
const SWEEP_AT_KINDS = 1000;

interface KindState {
  loggedAt: number;
  suppressed: number;
}

export function createLogThrottle(
  logger: Logger,
  options: { windowMs?: number; now?: () => number } = {},
): LogThrottle {
  const windowMs = options.windowMs ?? 10_000;
  const now = options.now ?? Date.now;
  const kinds = new Map<string, KindState>();
  const log =
    (level: 'warn' | 'info') =>
    (kind: string, fields: Record<string, unknown>, message: string, via?: Logger) => {
      const t = now();
      const state = kinds.get(kind);
      if (state && t - state.loggedAt < windowMs) {
        state.suppressed += 1;
        return;
      }
      const suppressed = state?.suppressed ?? 0;
      kinds.set(kind, { loggedAt: t, suppressed: 0 });
      if (kinds.size > SWEEP_AT_KINDS) forgetQuiet(kinds, t, windowMs);
      (via ?? logger)[level](suppressed > 0 ? { ...fields, suppressed } : fields, message);
    };
  return { warn: log('warn'), info: log('info'), kinds: () => kinds.size };
}

/** Forgets the kinds whose window has passed with nothing suppressed: nothing left to report. */
function forgetQuiet(kinds: Map<string, KindState>, t: number, windowMs: number): void {
  for (const [name, seen] of kinds) {
    if (seen.suppressed === 0 && t - seen.loggedAt >= windowMs) kinds.delete(name);
  }
}

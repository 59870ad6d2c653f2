import type { Logger } from 'pino';

/**
 * Repeated warnings, rate-limited: the first of a kind is logged at once, the rest of its
 * window only counted and reported (`suppressed`) with the next one logged. A flood of the
 * same fault (a Redis that refuses writes, a client sending garbage) costs a line per window,
 * not a line per request.
 */
export interface LogThrottle {
  /** `via`: the request's logger when it happened in one, so the line carries its id. */
  warn(kind: string, fields: Record<string, unknown>, message: string, via?: Logger): void;
  info(kind: string, fields: Record<string, unknown>, message: string, via?: Logger): void;
}

export function createLogThrottle(
  logger: Logger,
  options: { windowMs?: number; now?: () => number } = {},
): LogThrottle {
  const windowMs = options.windowMs ?? 10_000;
  const now = options.now ?? Date.now;
  const kinds = new Map<string, { loggedAt: number; suppressed: number }>();
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
      (via ?? logger)[level](suppressed > 0 ? { ...fields, suppressed } : fields, message);
    };
  return { warn: log('warn'), info: log('info') };
}

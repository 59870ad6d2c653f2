/** delta-seconds, or Zulip's fractional seconds. */
const SECONDS = /^\s*\d+(\.\d+)?\s*$/;

/**
 * A `Retry-After` value as the contract passes it on (section 3): whole seconds, rounded up, at
 * least 1 and at most `maxSeconds`, from any form an upstream may send: delta-seconds,
 * fractional seconds (Zulip's `retry-after` body field), or an HTTP-date (RFC 9110 §10.2.3).
 * Anything unreadable, negative or absent becomes 1: "try again soon", never "never".
 */
export function retryAfterSeconds(
  value: string | number | readonly string[] | undefined,
  options: { maxSeconds: number; now?: number },
): number {
  const seconds = secondsOf(value, options.now);
  if (!Number.isFinite(seconds)) return seconds > 0 ? options.maxSeconds : 1;
  return Math.min(options.maxSeconds, Math.max(1, Math.ceil(seconds)));
}

/** The seconds the value says, before any bound; 1 when it says nothing readable. */
function secondsOf(value: string | number | readonly string[] | undefined, now?: number): number {
  const raw = typeof value === 'string' || typeof value === 'number' ? value : value?.[0];
  if (typeof raw === 'number') return raw;
  if (raw === undefined) return 1;
  if (SECONDS.test(raw)) return Number(raw);
  const date = Date.parse(raw);
  return Number.isNaN(date) ? 1 : (date - (now ?? Date.now())) / 1000;
}

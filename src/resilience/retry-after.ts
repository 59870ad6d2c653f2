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
  const raw = typeof value === 'string' || typeof value === 'number' ? value : value?.[0];
  let seconds: number;
  if (typeof raw === 'number') seconds = raw;
  else if (raw === undefined) seconds = 1;
  else if (/^\s*\d+(\.\d+)?\s*$/.test(raw)) seconds = Number(raw);
  else {
    const date = Date.parse(raw);
    seconds = Number.isNaN(date) ? 1 : (date - (options.now ?? Date.now())) / 1000;
  }
  if (!Number.isFinite(seconds)) return seconds > 0 ? options.maxSeconds : 1;
  return Math.min(options.maxSeconds, Math.max(1, Math.ceil(seconds)));
}

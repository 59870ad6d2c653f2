const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/**
 * Whether a JSON text nests objects and arrays deeper than `max` (strings are skipped). One
 * pass over the bytes before parsing: a body nested thousands deep would otherwise overflow
 * the stack of whatever walks it next (serialisation) and end in a 500 rather than a 502.
 */
export function nestsDeeperThan(body: Buffer, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < body.length; i += 1) {
    const byte = body[i];
    if (byte === QUOTE) {
      i = endOfString(body, i);
      if (i < 0) return false; // unterminated: JSON.parse will say so
    } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      depth += 1;
      if (depth > max) return true;
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      depth -= 1;
    }
  }
  return false;
}

/** The index of the quote that closes the string opened at `start`, or -1. */
function endOfString(body: Buffer, start: number): number {
  let quote = body.indexOf(QUOTE, start + 1);
  while (quote > 0) {
    let backslashes = 0;
    while (body[quote - 1 - backslashes] === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return quote;
    quote = body.indexOf(QUOTE, quote + 1);
  }
  return -1;
}

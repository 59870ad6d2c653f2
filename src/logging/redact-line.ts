/** What a redacted value is written as. */
export const CENSOR = '[redacted]';

/**
 * Keys whose values never reach a log line, at any depth of any line: the credentials browsers
 * and upstreams send (headers), and the names the gateway and the chat server give keys,
 * tokens and passwords. The gateway's own configured secrets are removed by value besides,
 * wherever they appear (scrub-secrets.ts).
 */
export const REDACTED_KEYS: readonly string[] = [
  'authorization',
  'cookie',
  'set-cookie',
  'service-client-token',
  'x-api-key',
  'password',
  'apiKey',
  'api_key',
  'clientToken',
  'token',
];

const KEYS = new Set(REDACTED_KEYS);

/**
 * A key of a JSON object as pino writes it: `"name":`. A line that holds none is written as it
 * is. A match inside a string value (an escaped quote before it) costs a parse, never a change.
 */
const MENTIONS = new RegExp(
  `"(?:${REDACTED_KEYS.map((k) => k.replaceAll('-', '\\-')).join('|')})":`,
);

/**
 * What stands in for a line that holds a credential's key but cannot be parsed to blank it. pino
 * writes JSON, so this is not expected; if it happens, the line is lost, not the credential.
 */
const WITHHELD = `${JSON.stringify({ level: 50, msg: 'log line withheld: it named a credential and could not be parsed to redact it' })}\n`;

/**
 * Blanks the value of every key of REDACTED_KEYS in one JSON log line (pino's, newline ended),
 * whatever object it is in: the line's own fields, a child logger's bindings, an error's
 * properties. It replaces pino's `redact`, which cloned and stringified every top-level value
 * of every line for its wildcard paths (`*.token`): ~6 µs and ~16 KB of garbage per request
 * line, where one scan of the finished line finds nothing to do on almost every line.
 */
export function redactLine(line: string): string {
  if (!MENTIONS.test(line)) return line;
  let parsed: unknown;
  try {
    parsed = JSON.parse(line, (key, value: unknown) => (KEYS.has(key) ? CENSOR : value));
  } catch {
    return WITHHELD;
  }
  return `${JSON.stringify(parsed)}\n`;
}

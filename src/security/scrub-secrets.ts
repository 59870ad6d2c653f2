const REDACTED = '[redacted]';

/**
 * Shorter strings are not scrubbed: replacing every occurrence of a short word would mangle
 * ordinary text, and the schema's own minimums keep real keys longer than this.
 */
const MIN_SECRET_LENGTH = 8;

/**
 * Every form in which the gateway itself writes a secret (contract section 1): as it is,
 * percent-encoded (a URL or header), form-encoded (a login body) and escaped inside a JSON
 * string (a log line). The base64 of a Basic header is a secret of its own: callers pass it.
 */
function formsOf(secret: string): string[] {
  return [
    secret,
    encodeURIComponent(secret),
    new URLSearchParams({ s: secret }).toString().slice(2),
    JSON.stringify(secret).slice(1, -1),
  ];
}

function formsOfAll(secrets: readonly (string | undefined)[]): string[] {
  const forms = secrets
    .filter((s): s is string => s !== undefined && s.length >= MIN_SECRET_LENGTH)
    .flatMap(formsOf);
  // Longest first: a secret that contains another is removed whole.
  return [...new Set(forms)].sort((a, b) => b.length - a.length);
}

function scrubForms(text: string, forms: readonly string[]): string {
  let clean = text;
  for (const form of forms) {
    if (clean.includes(form)) clean = clean.replaceAll(form, REDACTED);
  }
  return clean;
}

/**
 * Removes the gateway's own secrets from text it did not write itself (an upstream error that
 * echoes what it was sent) and from log lines, before either goes anywhere (contract sections
 * 1 and 3). `secrets` are the configured ones (Config.secrets, from the schema's marks);
 * `callSecrets` are those of the one call whose answer is scrubbed: a user's key, the Basic
 * value built from it, a login password.
 */
export function createSecretScrubber(
  secrets: readonly (string | undefined)[],
): (text: string, callSecrets?: readonly (string | undefined)[]) => string {
  const fixed = formsOfAll(secrets);
  return (text, callSecrets = []) =>
    scrubForms(text, callSecrets.length === 0 ? fixed : formsOfAll([...secrets, ...callSecrets]));
}
export type SecretScrubber = ReturnType<typeof createSecretScrubber>;

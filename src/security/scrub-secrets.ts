const REDACTED = '[redacted]';

/**
 * Removes the gateway's own secrets from text an upstream wrote (an error message that echoes
 * a key it was sent), before that text reaches a response or a log line (contract section 3).
 * Each secret is matched as sent and percent-encoded.
 */
export function createSecretScrubber(
  secrets: readonly (string | undefined)[],
): (text: string, callSecrets?: readonly string[]) => string {
  const fixed = secrets.filter((s): s is string => s !== undefined && s.length >= 8);
  return (text, callSecrets = []) => {
    let clean = text;
    for (const secret of [...fixed, ...callSecrets]) {
      if (secret.length < 8) continue;
      for (const form of new Set([secret, encodeURIComponent(secret)])) {
        if (clean.includes(form)) clean = clean.replaceAll(form, REDACTED);
      }
    }
    return clean;
  };
}
export type SecretScrubber = ReturnType<typeof createSecretScrubber>;

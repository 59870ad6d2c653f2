import { pino, type DestinationStream, type Logger } from 'pino';
import { createSecretScrubber } from '../security/scrub-secrets.js';
import { redactLine } from './redact-line.js';
import { serializeError } from './serialize-error.js';

export interface LoggerOptions {
  level: string;
  /** Where lines go; stdout when absent. Tests pass a capturing stream. */
  destination?: DestinationStream;
  /**
   * The configured secrets (Config.secrets, from the schema's marks): removed from every line
   * in every form the gateway writes them, whatever field or message they hide in. Credentials
   * of others (a browser's cookie, a user's key) are blanked by key besides (redact-line.ts).
   */
  secrets?: readonly string[];
}

export function createLogger(options: LoggerOptions): Logger {
  const secrets = options.secrets ?? [];
  const scrub = createSecretScrubber(secrets);
  return pino(
    {
      level: options.level,
      serializers: { err: serializeError },
      base: { service: 'bff-gateway' },
      hooks: {
        streamWrite: secrets.length === 0 ? redactLine : (line: string) => scrub(redactLine(line)),
      },
    },
    // Asynchronous writes to stdout: while one write is under way, the lines logged meanwhile
    // go out together in the next, so a busy gateway makes far fewer write calls than it logs
    // lines, and a quiet one writes each line at once. Pino flushes what is left when the
    // process exits.
    options.destination ?? pino.destination({ dest: 1, sync: false }),
  );
}

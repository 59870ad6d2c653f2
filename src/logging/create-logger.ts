import { pino, type DestinationStream, type Logger } from 'pino';
import { createSecretScrubber } from '../security/scrub-secrets.js';
import { serializeError } from './serialize-error.js';

/**
 * Paths pino blanks out wherever they appear in a log object: the credentials browsers and
 * upstreams send in these headers, whoever they belong to. The gateway's own configured
 * secrets are removed by value besides (LoggerOptions.secrets), wherever they appear.
 */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["service-client-token"]',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  '*.authorization',
  '*.cookie',
  '*["set-cookie"]',
  '*.password',
  '*.apiKey',
  '*.api_key',
  '*.clientToken',
  '*.token',
];

export interface LoggerOptions {
  level: string;
  /** Where lines go; stdout when absent. Tests pass a capturing stream. */
  destination?: DestinationStream;
  /**
   * The configured secrets (Config.secrets, from the schema's marks): removed from every line
   * in every form the gateway writes them, whatever field or message they hide in.
   */
  secrets?: readonly string[];
}

export function createLogger(options: LoggerOptions): Logger {
  const secrets = options.secrets ?? [];
  const scrub = createSecretScrubber(secrets);
  return pino(
    {
      level: options.level,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      serializers: { err: serializeError },
      base: { service: 'bff-gateway' },
      ...(secrets.length === 0 ? {} : { hooks: { streamWrite: (line: string) => scrub(line) } }),
    },
    options.destination,
  );
}

import { pino, type DestinationStream, type Logger } from 'pino';
import { createSecretScrubber } from '../security/scrub-secrets.js';

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

/**
 * pino's error serializer, without what a Redis error carries of its command: ioredis puts the
 * command's arguments on its errors (the password of a refused AUTH, a session record, a key),
 * and those must not reach a log line. The command's name stays.
 */
export function serializeError(error: unknown): unknown {
  const serialized = pino.stdSerializers.err(error as Error) as unknown;
  if (typeof serialized !== 'object' || serialized === null) return serialized;
  const command = (serialized as { command?: unknown }).command;
  if (typeof command === 'object' && command !== null) {
    const { name } = command as { name?: unknown };
    return { ...serialized, command: { name } };
  }
  return serialized;
}

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

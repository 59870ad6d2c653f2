import { pino, type DestinationStream, type Logger } from 'pino';

/**
 * Paths pino blanks out wherever they appear in a log object. Credentials travel in these
 * headers; the gateway never logs bodies, and upstream errors never carry secrets.
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
}

export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      serializers: { err: serializeError },
      base: { service: 'bff-gateway' },
    },
    options.destination,
  );
}

import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';

/**
 * A configured secret, or a random one for this process with a warning: fine for a single
 * instance, but whatever it protects (cursors, sessions) dies on restart and does not cross
 * instances.
 */
export function secretOrEphemeral(
  value: string | undefined,
  variable: string,
  logger: Logger,
): string | Buffer {
  if (value !== undefined) return value;
  logger.warn(
    `${variable} is not set: using a random key that lasts until this process stops; set it when running more than one instance`,
  );
  return randomBytes(32);
}

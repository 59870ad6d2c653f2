import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import type { Logger } from 'pino';
import { createLogger } from '../../src/logging/create-logger.js';

export interface LogCapture {
  logger: Logger;
  /** Every line written so far, parsed. */
  lines(): Record<string, unknown>[];
  /** Every line written so far, raw, for "never appears anywhere" checks. */
  text(): string;
  /** Resolves with the first line, written already or still to come, that `match` accepts. */
  waitFor(match: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
}

/**
 * The production logger (same redaction) writing into memory; `secrets` are the configured
 * ones (Config.secrets), removed by value as main's logger removes them.
 */
export function createLogCapture(level = 'debug', secrets: readonly string[] = []): LogCapture {
  const chunks: string[] = [];
  const written = new EventEmitter();
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk.toString('utf8'));
      written.emit('chunk');
      callback();
    },
  });
  const logger = createLogger({ level, destination, secrets });
  const text = () => chunks.join('');
  const lines = () =>
    text()
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return {
    logger,
    text,
    lines,
    waitFor(match) {
      const seen = lines().find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => {
        const check = () => {
          const line = lines().find(match);
          if (!line) return;
          written.off('chunk', check);
          resolve(line);
        };
        written.on('chunk', check);
      });
    },
  };
}

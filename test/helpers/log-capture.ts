import { Writable } from 'node:stream';
import type { Logger } from 'pino';
import { createLogger } from '../../src/logging/create-logger.js';

export interface LogCapture {
  logger: Logger;
  /** Every line written so far, parsed. */
  lines(): Record<string, unknown>[];
  /** Every line written so far, raw, for "never appears anywhere" checks. */
  text(): string;
}

/** The production logger (same redaction) writing into memory. */
export function createLogCapture(level = 'debug'): LogCapture {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk.toString('utf8'));
      callback();
    },
  });
  const logger = createLogger({ level, destination });
  const text = () => chunks.join('');
  return {
    logger,
    text,
    lines: () =>
      text()
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../../../config/load-config.js';
import { createCursorCodec, type CursorCodec } from './search-cursor.js';

/**
 * Without CURSOR_SECRET each process signs with its own random key: fine for one instance,
 * but cursors then die on restart and do not cross instances, so it says so once.
 */
export function createSearchCursorCodecFromConfig(config: Config, logger: Logger): CursorCodec {
  let secret: string | Buffer | undefined = config.search.cursorSecret;
  if (secret === undefined) {
    secret = randomBytes(32);
    logger.warn(
      'CURSOR_SECRET is not set: next-page cursors are valid on this instance until it restarts',
    );
  }
  return createCursorCodec({ secret, searchBaseUrl: config.search.baseUrl });
}

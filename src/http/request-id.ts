import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Letters, digits and `._:-`, at most 128 characters: no CRLF, spaces or log-forging bytes. */
const WELL_FORMED = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/**
 * Reuses a well-formed incoming X-Request-Id, otherwise mints one; echoes it on the response
 * (contract section 3: the envelope's requestId matches it, and it travels upstream).
 */
export function assignRequestId(req: IncomingMessage, res: ServerResponse): void {
  const incoming = req.headers['x-request-id'];
  const id = typeof incoming === 'string' && WELL_FORMED.test(incoming) ? incoming : randomUUID();
  req.id = id;
  res.setHeader('X-Request-Id', id);
}

declare module 'http' {
  interface IncomingMessage {
    /** Set by assignRequestId before anything else runs. */
    id: string;
  }
}

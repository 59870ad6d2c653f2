import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';

/** Letters, digits and `._:-`, at most 128 characters: no CRLF, spaces or log-forging bytes. */
const WELL_FORMED = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

export const REQUEST_ID_HEADER = 'x-request-id';

/** Reuses a well-formed incoming X-Request-Id, otherwise mints one; echoes it on the response. */
export function createRequestId(): RequestHandler {
  return (req, res, next) => {
    const incoming = req.get(REQUEST_ID_HEADER);
    const id = incoming !== undefined && WELL_FORMED.test(incoming) ? incoming : randomUUID();
    req.id = id;
    res.setHeader('X-Request-Id', id);
    next();
  };
}

declare module 'http' {
  interface IncomingMessage {
    /** Set by createRequestId before anything else runs. */
    id: string;
  }
}

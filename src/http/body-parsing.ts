import express, { type RequestHandler } from 'express';
import { AppError } from '../errors/app-error.js';

/**
 * Request bodies are JSON only (contract section 2). A body of another type is 415 before the
 * parser reads it; a body over the limit is 413; invalid JSON is 400 (mapped in the error handler).
 */
export function createBodyParsing(limitBytes: number): RequestHandler[] {
  const requireJson: RequestHandler = (req, _res, next) => {
    // req.is() is false for a body of another type, but it counts `Content-Length: 0` (what a
    // browser sends for a body-less POST) as a body; an empty body has no type to refuse.
    const empty =
      req.headers['content-length'] === '0' && req.headers['transfer-encoding'] === undefined;
    if (!empty && req.is('application/json') === false) {
      next(
        new AppError('UNSUPPORTED_MEDIA_TYPE', 'Request bodies must be application/json.', {
          headers: { 'Accept-Post': 'application/json' },
        }),
      );
      return;
    }
    // A declared length over the limit is refused before a byte of the body is read (the
    // parser would read it all first, or wait for it until REQUEST_TIMEOUT_MS).
    const declared = Number(req.headers['content-length']);
    if (declared > limitBytes) {
      next(
        new AppError(
          'PAYLOAD_TOO_LARGE',
          `The request body is too large (at most ${limitBytes} bytes).`,
        ),
      );
      return;
    }
    next();
  };
  return [requireJson, express.json({ limit: limitBytes, strict: true, type: 'application/json' })];
}

import express, { type RequestHandler } from 'express';
import { AppError } from '../errors/app-error.js';

/**
 * Request bodies are JSON only (contract section 2). A body of another type is 415 before the
 * parser reads it; a body over the limit is 413; invalid JSON is 400 (mapped in the error handler).
 */
export function createBodyParsing(limitBytes: number): RequestHandler[] {
  const requireJson: RequestHandler = (req, _res, next) => {
    // req.is() is null without a body and false for a body of another type.
    if (req.is('application/json') === false) {
      next(
        new AppError('UNSUPPORTED_MEDIA_TYPE', 'Request bodies must be application/json.', {
          headers: { 'Accept-Post': 'application/json' },
        }),
      );
      return;
    }
    next();
  };
  return [requireJson, express.json({ limit: limitBytes, strict: true, type: 'application/json' })];
}

import type { z } from 'zod';
import { AppError } from './app-error.js';
import { parseWith } from './parse-with.js';

export type InputLocation = 'query' | 'body' | 'path';

/** A zod failure on request input as one VALIDATION_FAILED error listing every bad field. */
export function toValidationError(error: z.ZodError, location: InputLocation): AppError {
  const errors = error.issues.map((issue) => ({
    path: [location, ...issue.path.map(String)].join('.'),
    message: issue.message,
  }));
  const detail = `Invalid request ${location}: ${[...new Set(errors.map((e) => e.message))].join('; ')}.`;
  return new AppError('VALIDATION_FAILED', detail, { errors });
}

/** Parses request input with a feature's schema; the parsed value is what handlers use. */
export function parseInput<S extends z.ZodType>(
  schema: S,
  input: unknown,
  location: InputLocation,
): z.output<S> {
  return parseWith(schema, input, (error) => {
    throw toValidationError(error, location);
  });
}

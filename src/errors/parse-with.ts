import type { z } from 'zod';
import type { SafeParser } from './in-place-schema.js';

/**
 * The one zod-parse helper: the parsed value, or whatever `invalid` makes of the failure. It
 * throws the error the caller's layer owes (a 400 for request input, a 502 for an upstream
 * body) or returns a fallback (a corrupt cache entry is a miss).
 */
export function parseWith<T, F>(
  schema: SafeParser<T>,
  value: unknown,
  invalid: (error: z.ZodError) => F,
): T | F {
  const result = schema.safeParse(value);
  return result.success ? result.data : invalid(result.error);
}

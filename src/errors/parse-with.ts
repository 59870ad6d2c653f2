import type { z } from 'zod';

/**
 * The one zod-parse helper: the parsed value, or whatever `invalid` makes of the failure. It
 * throws the error the caller's layer owes (a 400 for request input, a 502 for an upstream
 * body) or returns a fallback (a corrupt cache entry is a miss).
 */
export function parseWith<S extends z.ZodType, F>(
  schema: S,
  value: unknown,
  invalid: (error: z.ZodError) => F,
): z.output<S> | F {
  const result = schema.safeParse(value);
  return result.success ? result.data : invalid(result.error);
}

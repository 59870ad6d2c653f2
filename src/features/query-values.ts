import { z } from 'zod';

/** A query parameter that must appear at most once; Express parses repeats into arrays. */
export const singleValue = (name: string) =>
  z.string({
    error: (issue) =>
      issue.input === undefined ? `${name} is required` : `${name} must be given once`,
  });

/** A boolean query parameter as the contract accepts it: true/false/1/0 (section 2). */
export const booleanValue = (name: string) =>
  singleValue(name)
    .pipe(z.enum(['true', 'false', '1', '0'], { error: `${name} must be true, false, 1 or 0` }))
    .transform((value) => value === 'true' || value === '1')
    .meta({ enum: ['true', 'false', '1', '0'] });

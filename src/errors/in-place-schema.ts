import { Ajv } from 'ajv';
import { z } from 'zod';

/** What parseWith needs of a schema: zod's safeParse, or a stand-in with zod's verdicts. */
export interface SafeParser<T> {
  safeParse(value: unknown): z.ZodSafeParseResult<T>;
}

const ajv = new Ajv({ allErrors: false, strict: true });

/**
 * A zod schema's verdict on a value, without zod's copy of the value. zod builds a new object for
 * every object it checks; for a large upstream body that copy was the biggest part of a search
 * miss's garbage (docs/log/measurements.md). Only for schemas whose output is their input: loose
 * objects, no transforms, defaults or stripping.
 *
 * ajv, compiled once from the schema's own JSON Schema, checks the value where it lies; the
 * schema's refinements, which JSON Schema cannot say, are passed as the same predicates the
 * schema's `.refine` calls. A value either check rejects goes through zod, so the error (and the
 * verdict) a caller reports is zod's: the fast path can only accept what zod accepts
 * (test/unit/in-place-schema.test.ts holds the two to the same verdicts).
 */
export function inPlaceSchema<S extends z.ZodType>(
  schema: S,
  refinements: readonly ((value: z.output<S>) => boolean)[],
): SafeParser<z.output<S>> {
  const check = ajv.compile(z.toJSONSchema(schema, { target: 'draft-7', io: 'input' }));
  return {
    safeParse(value) {
      if (check(value) && refinements.every((holds) => holds(value as z.output<S>))) {
        return { success: true, data: value as z.output<S> };
      }
      return schema.safeParse(value);
    },
  };
}

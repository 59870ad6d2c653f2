import { z } from 'zod';
import { singleValue as once } from '../query-values.js';
import { SORT_ORDERS, type SortOrder } from './rerank.js';

/** What the router hands the service after validation. */
export type SearchRequest =
  | { kind: 'query'; q: string; k: number; sort: SortOrder }
  | { kind: 'cursor'; cursor: string };

const MAX_QUERY_CODE_POINTS = 500;

/**
 * The input rules of contract section 2 for `GET /api/search`. `q` is normalised (Unicode
 * NFC, trimmed, inner whitespace collapsed) so equivalent queries share one cache entry and one
 * upstream request. `cursor` continues a previous search and stands alone. Unknown parameters
 * are dropped here and never forwarded.
 */
export function createSearchQuerySchema(maxK: number) {
  const kMessage = `k must be a whole number from 1 to ${maxK}`;
  return z
    .object({
      q: once('q')
        .transform((q) => q.normalize('NFC').trim().replace(/\s+/gu, ' '))
        .pipe(
          z
            .string()
            .min(1, 'q must not be empty')
            .refine(
              (q) => [...q].length <= MAX_QUERY_CODE_POINTS,
              `q must be at most ${MAX_QUERY_CODE_POINTS} characters`,
            ),
        )
        .optional()
        .meta({
          description: `The search text (required unless \`cursor\` is given), given once; normalised to NFC, trimmed, inner whitespace collapsed; at most ${MAX_QUERY_CODE_POINTS} characters.`,
          examples: ['wireless headphones'],
        }),
      k: once('k')
        .regex(/^\d{1,4}$/, kMessage)
        .transform(Number)
        .pipe(z.number().min(1, kMessage).max(maxK, kMessage))
        .optional()
        .meta({
          description: `How many products, a whole number from 1 to ${maxK} (default ${maxK}).`,
          // Sent as text in the query string, but a client should treat it as the integer it is.
          type: 'integer',
          minimum: 1,
          maximum: maxK,
          default: maxK,
        }),
      sort: once('sort')
        .pipe(z.enum(SORT_ORDERS, { error: `sort must be one of ${SORT_ORDERS.join(', ')}` }))
        .optional()
        .meta({ description: 'The order (default relevance).', enum: [...SORT_ORDERS] }),
      cursor: once('cursor')
        .min(1, 'cursor must not be empty')
        .max(4096, 'cursor is too long')
        .optional()
        .meta({
          description:
            "The opaque cursor of a result list's `next` link; stands alone (no q, k or sort).",
        }),
    })
    .superRefine((input, ctx) => {
      if (input.cursor !== undefined) {
        for (const name of ['q', 'k', 'sort'] as const) {
          if (input[name] !== undefined) {
            ctx.addIssue({
              code: 'custom',
              path: [name],
              message: `${name} cannot be combined with cursor`,
            });
          }
        }
      } else if (input.q === undefined) {
        ctx.addIssue({ code: 'custom', path: ['q'], message: 'q is required' });
      }
    })
    .transform((input): SearchRequest =>
      input.cursor !== undefined
        ? { kind: 'cursor', cursor: input.cursor }
        : { kind: 'query', q: input.q ?? '', k: input.k ?? maxK, sort: input.sort ?? 'relevance' },
    );
}

import { z } from 'zod';

/**
 * A cached response: the final, serialised body the gateway sends, so a hit costs no parsing,
 * reranking or rewriting. Timestamps are epoch milliseconds.
 */
export interface CacheEntry {
  readonly storedAt: number;
  /** Served as a HIT until then. */
  readonly freshUntil: number;
  /** Served as STALE (with one background refresh) until then. */
  readonly staleUntil: number;
  /** Served only when the upstream fails, until then. */
  readonly errorUntil: number;
  readonly contentType: string;
  readonly body: string;
}

const EntryMeta = z.strictObject({
  v: z.literal(1),
  storedAt: z.number().int().nonnegative(),
  freshUntil: z.number().int().nonnegative(),
  staleUntil: z.number().int().nonnegative(),
  errorUntil: z.number().int().nonnegative(),
  contentType: z.string().min(1).max(200),
  length: z.number().int().nonnegative(),
});

/**
 * Wire form for Redis: one JSON line of metadata, a newline, then the body verbatim. The body
 * is not re-encoded, so a hit never JSON-parses the (large) body; its length guards against
 * truncated or foreign values.
 */
export function encodeEntry(entry: CacheEntry): string {
  const { body, ...rest } = entry;
  return `${JSON.stringify({ v: 1, ...rest, length: body.length })}\n${body}`;
}

/** Returns undefined for anything that is not an intact entry of this version. */
export function decodeEntry(raw: string): CacheEntry | undefined {
  const newline = raw.indexOf('\n');
  if (newline < 0) return undefined;
  let metaJson: unknown;
  try {
    metaJson = JSON.parse(raw.slice(0, newline));
  } catch {
    return undefined;
  }
  const meta = EntryMeta.safeParse(metaJson);
  if (!meta.success) return undefined;
  const body = raw.slice(newline + 1);
  if (body.length !== meta.data.length) return undefined;
  const { v, length, ...times } = meta.data;
  return { ...times, body };
}

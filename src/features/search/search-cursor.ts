import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { AppError } from '../../errors/app-error.js';
import { SORT_ORDERS, type SortOrder } from './rerank.js';

/** What a cursor stands for: the upstream's next-page query, on one search origin, one sort. */
export interface CursorPage {
  /** Query string for `{SEARCH_BASE_URL}/v1/search`, without '?'. */
  query: string;
  sort: SortOrder;
}

export interface CursorCodec {
  /** A cursor for the upstream's `next` URL, or undefined when it is not a search on our origin. */
  encode(upstreamNext: string, sort: SortOrder): string | undefined;
  /** The page a cursor stands for; INVALID_CURSOR for anything forged, foreign or garbled. */
  decode(cursor: string): CursorPage;
}

/** Printable ASCII without '#' or space: safe as a request target, no CRLF. */
const SAFE_QUERY = /^[!"$-~]{1,2048}$/;

const Payload = z.strictObject({
  v: z.literal(1),
  o: z.string(),
  q: z.string().regex(SAFE_QUERY),
  s: z.enum(SORT_ORDERS),
});

/** `url` resolved against `base`, parsed once; undefined when it is not a URL. */
function parsedUrl(url: string, base: URL): URL | undefined {
  try {
    return new URL(url, base);
  } catch {
    return undefined;
  }
}

/**
 * Cursors are `base64url(payload).base64url(hmac)`: opaque to the browser and tamper-evident,
 * so a client cannot smuggle another host, path or an oversized `k` through one. The payload
 * names the search origin it was made for; a cursor from another configuration is rejected.
 */
export function createCursorCodec(options: {
  secret: string | Buffer;
  searchBaseUrl: string;
}): CursorCodec {
  const searchEndpoint = new URL(`${options.searchBaseUrl}/v1/search`);
  const origin = options.searchBaseUrl;
  const sign = (payload: string) => createHmac('sha256', options.secret).update(payload).digest();
  const invalid = (why: string) =>
    new AppError(
      'INVALID_CURSOR',
      `The cursor is not valid: ${why}. Start again from a new search.`,
    );

  return {
    encode(upstreamNext, sort) {
      const next = parsedUrl(upstreamNext, searchEndpoint);
      if (
        next === undefined ||
        next.origin !== searchEndpoint.origin ||
        next.username !== '' ||
        next.password !== '' ||
        next.pathname !== searchEndpoint.pathname
      ) {
        return undefined;
      }
      const query = next.search.slice(1);
      if (!SAFE_QUERY.test(query)) return undefined;
      const payload = Buffer.from(JSON.stringify({ v: 1, o: origin, q: query, s: sort })).toString(
        'base64url',
      );
      return `${payload}.${sign(payload).toString('base64url')}`;
    },
    decode(cursor) {
      const [payload, signature, extra] = cursor.split('.');
      if (!payload || !signature || extra !== undefined) throw invalid('it is malformed');
      const expected = sign(payload);
      const given = Buffer.from(signature, 'base64url');
      // Node's base64url decoder is lenient (padding, stray bytes, unused bits): only the one
      // canonical spelling of the signature is accepted.
      const canonical = given.toString('base64url') === signature;
      if (!canonical || given.length !== expected.length || !timingSafeEqual(given, expected)) {
        throw invalid('it was not issued by this gateway');
      }
      let json: unknown;
      try {
        json = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      } catch {
        throw invalid('it is malformed');
      }
      const parsed = Payload.safeParse(json);
      if (!parsed.success) throw invalid('it is malformed');
      if (parsed.data.o !== origin) throw invalid('it belongs to another search service');
      return { query: parsed.data.q, sort: parsed.data.s };
    },
  };
}

import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '../../errors/app-error.js';

/*
 * Signed result links (contract section 5, SEARCH_LINKS=gateway). A link the gateway issues to
 * its redirect route ends with `sig=`, an HMAC-SHA256 over every byte of the query before it
 * (the `&` that joins them excluded), truncated to 16 bytes: 22 base64url characters, 128 bits.
 * Nothing is decoded or re-serialised, so the search service gets back exactly the bytes it
 * issued (after the `rp` rewrite, which runs before signing).
 */

const PARAM = 'sig';
/** 16 bytes of the HMAC: 128 bits are beyond guessing, and links stay short. */
const SIG_BYTES = 16;

export interface LinkSigner {
  /** The link with `sig` as the last parameter of its query, before any fragment. */
  sign(link: string): string;
  /**
   * The query to forward (the request's without its final `&sig=…`, every other byte as
   * received), or INVALID_LINK when the signature is missing, altered, repeated or not last.
   * `query` is the request target's part after '?', or undefined when it has none.
   */
  verify(query: string | undefined): string;
  /** A public name of the key (not the key): cached links are stored under it. */
  readonly keyId: string;
}

/**
 * A signer keyed from `secret` (CURSOR_SECRET, or the process's ephemeral key): the links key
 * is derived from it with its own label, so a link's signature never doubles as a cursor's.
 */
export function createLinkSigner(options: { secret: string | Buffer }): LinkSigner {
  const key = createHmac('sha256', options.secret).update('search-links').digest();
  const signatureOf = (query: string) =>
    createHmac('sha256', key).update(query).digest().subarray(0, SIG_BYTES).toString('base64url');
  const invalid = (why: string) =>
    new AppError('INVALID_LINK', `This link was not issued by the gateway: ${why}.`);

  return {
    keyId: createHash('sha256').update(key).update('key-id').digest('base64url').slice(0, 8),
    sign(link) {
      const hash = link.indexOf('#');
      const beforeFragment = hash < 0 ? link : link.slice(0, hash);
      const fragment = hash < 0 ? '' : link.slice(hash);
      const question = beforeFragment.indexOf('?');
      const path = question < 0 ? beforeFragment : beforeFragment.slice(0, question);
      const query = question < 0 ? '' : beforeFragment.slice(question + 1);
      const joined = query === '' ? '' : `${query}&`;
      return `${path}?${joined}${PARAM}=${signatureOf(query)}${fragment}`;
    },
    verify(query) {
      if (query === undefined) throw invalid('it carries no signature');
      const amp = query.lastIndexOf('&');
      const last = query.slice(amp + 1);
      if (!last.startsWith(`${PARAM}=`)) {
        throw invalid(
          query.split('&').some((p) => p === PARAM || p.startsWith(`${PARAM}=`))
            ? 'its signature is not the last parameter'
            : 'it carries no signature',
        );
      }
      const signed = amp < 0 ? '' : query.slice(0, amp);
      const given = Buffer.from(last.slice(PARAM.length + 1));
      const expected = Buffer.from(signatureOf(signed));
      // A repeated `sig` fails here too: the signature covers the earlier one as query bytes.
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        throw invalid('its signature does not match');
      }
      return signed;
    },
  };
}

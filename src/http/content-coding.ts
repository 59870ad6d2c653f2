import type { Coding } from '../cache/encodings.js';

/** What an answer's body may be sent as: compressed, or as it is. */
export type ContentCoding = Coding | 'identity';

/** A weight (RFC 9110 §12.4.2): 0 to 1 with at most three decimals. */
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

/**
 * The content coding an answer goes out in, from the request's `Accept-Encoding` (contract
 * section 4, RFC 9110 §12.5.3):
 *
 * - the highest weight wins; a coding that is not listed gets the weight of `*`, or none;
 *   `identity` that is not listed gets the weight of `*`, or 1;
 * - at equal weight `br` comes before `gzip`, and both before `identity`, whatever order the
 *   client listed them in (a browser's `gzip, deflate, br` lists them all at weight 1);
 * - codings the gateway does not make (`deflate`, `zstd`, ...) are ignored, and so is an element
 *   whose weight is malformed; `x-gzip` is `gzip` (RFC 9110 §8.4.1.3);
 * - a coding listed more than once counts with its lowest weight: a refusal is never overruled;
 * - no header, or an empty one, is identity; so is a header that refuses everything
 *   (`identity;q=0, *;q=0`): RFC 9110 allows a 406 there, but the body is still worth more to
 *   the client than an error, and identity is what the contract says an answer is "else".
 */
export function chooseEncoding(header: string | undefined): ContentCoding {
  if (header === undefined) return 'identity';
  let br: number | undefined;
  let gzip: number | undefined;
  let identity: number | undefined;
  let star: number | undefined;
  for (const element of header.split(',')) {
    const q = weightOf(element);
    if (q === undefined) continue;
    const name = codingOf(element);
    if (name === 'br') br = lowest(br, q);
    else if (name === 'gzip' || name === 'x-gzip') gzip = lowest(gzip, q);
    else if (name === 'identity') identity = lowest(identity, q);
    else if (name === '*') star = lowest(star, q);
  }
  return preferredOf(br, gzip, identity, star);
}

/** From the listed weights: an unlisted coding gets the weight of `*`, else none (identity 1). */
function preferredOf(
  br: number | undefined,
  gzip: number | undefined,
  identity: number | undefined,
  star: number | undefined,
): ContentCoding {
  return preferred(br ?? star ?? 0, gzip ?? star ?? 0, identity ?? star ?? 1);
}

/** The element's coding name, lower case, without its parameters. */
function codingOf(element: string): string {
  const semicolon = element.indexOf(';');
  return (semicolon < 0 ? element : element.slice(0, semicolon)).trim().toLowerCase();
}

function lowest(known: number | undefined, q: number): number {
  return known === undefined ? q : Math.min(known, q);
}

/** The coding of the highest weight; br or gzip only when their weight is above 0. */
function preferred(qBr: number, qGzip: number, qIdentity: number): ContentCoding {
  // Ties go to the first of br, gzip, identity: strictly greater weights only move it on.
  if (qBr > 0 && qBr >= qGzip && qBr >= qIdentity) return 'br';
  if (qGzip > 0 && qGzip >= qIdentity) return 'gzip';
  return 'identity';
}

/** The element's weight: 1 without `q`, undefined when its `q` is malformed. */
function weightOf(element: string): number | undefined {
  let q = 1;
  let semicolon = element.indexOf(';');
  while (semicolon >= 0) {
    const next = element.indexOf(';', semicolon + 1);
    const parameter = element.slice(semicolon + 1, next < 0 ? undefined : next);
    const equals = parameter.indexOf('=');
    if (equals >= 0 && parameter.slice(0, equals).trim().toLowerCase() === 'q') {
      const value = parameter.slice(equals + 1).trim();
      if (!QVALUE.test(value)) return undefined;
      q = Number(value);
    }
    semicolon = next;
  }
  return q;
}

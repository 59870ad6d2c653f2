import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { encodedBody, type Encodable, type MadeEncoding } from '../cache/encodings.js';
import { codedEtag, codingFor } from './compression.js';
import type { ContentCoding } from './content-coding.js';

/** A body with its media type and the digest its strong validator is made of. */
export interface EncodableRepresentation extends Encodable {
  readonly contentType: string;
  /** base64url SHA-256 of `body`. */
  readonly digest: string;
}

/** A body held in memory to be sent as it is or compressed (a served file, a fixed document). */
export function toEncodable(body: Buffer, contentType: string): EncodableRepresentation {
  return { body, contentType, digest: createHash('sha256').update(body).digest('base64url') };
}

/**
 * The strong validator of a representation in a coding (RFC 9110 §8.8.3): its digest, quoted,
 * with `-br` or `-gz` for the compressed ones (contract section 4: each coding is its own
 * representation, so no tag names two of them).
 */
export const etagOf = (representation: { readonly digest: string }, coding: ContentCoding) =>
  codedEtag(`"${representation.digest}"`, coding);

/**
 * `If-None-Match` compared weakly (RFC 9110 §13.1.2): `*`, or any listed entity-tag whose
 * opaque part equals ours, with or without `W/`.
 */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  if (ifNoneMatch.trim() === '*') return true;
  for (const candidate of ifNoneMatch.split(',')) {
    const tag = candidate.trim();
    if ((tag.startsWith('W/') ? tag.slice(2) : tag) === etag) return true;
  }
  return false;
}

/**
 * Sends a representation held in memory (a cache entry, a served file) in the coding the
 * request gets, with that coding's ETag; the caller has set every other header. An
 * `If-None-Match` naming the representation the request would get is a 304 with no body and
 * no `Content-Encoding`. Stored compressed bytes go out as they are; only a body that has none
 * in its coding yet (a miss, a hit in a coding nobody asked for before, a file's first request)
 * waits for its one compression (encodings.ts), which is returned so that the caller can keep
 * it with the stored entry. `HEAD` gets the same headers, `Content-Length` included; Node
 * leaves the body out.
 */
export function sendEncoded(
  req: IncomingMessage,
  res: ServerResponse,
  representation: EncodableRepresentation,
): MadeEncoding | undefined {
  // Read once: the caller may let go of the representation's body once this returns.
  const { body } = representation;
  const coding = codingFor(req, res, body.length, representation.contentType);
  const etag = etagOf(representation, coding);
  res.setHeader('ETag', etag);
  if (matches(req.headers['if-none-match'], etag)) {
    res.statusCode = 304;
    res.end();
    return undefined;
  }
  if (coding === 'identity') {
    writeBody(res, representation, body);
    return undefined;
  }
  const stored = representation.encoded?.[coding];
  const encoded = stored ?? encodedBody(representation, coding);
  if (Buffer.isBuffer(encoded)) {
    writeBody(res, representation, encoded, coding);
    return stored === undefined ? { coding, bytes: encoded } : undefined;
  }
  // Meanwhile something else may have answered (an error handler): then there is nothing to do.
  encoded.then(
    (bytes) => {
      if (!res.headersSent) writeBody(res, representation, bytes, coding);
    },
    () => {
      // zlib does not fail on a buffer; if it ever did, the body is still worth sending.
      if (res.headersSent) return;
      res.setHeader('ETag', etagOf(representation, 'identity'));
      writeBody(res, representation, body);
    },
  );
  return undefined;
}

function writeBody(
  res: ServerResponse,
  representation: EncodableRepresentation,
  bytes: Buffer,
  coding?: ContentCoding,
): void {
  res.statusCode = 200;
  res.setHeader('Content-Type', representation.contentType);
  if (coding !== undefined) res.setHeader('Content-Encoding', coding);
  res.setHeader('Content-Length', bytes.length);
  res.end(bytes);
}

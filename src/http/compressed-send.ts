import type { Response } from 'express';
import { compress, type Coding } from '../cache/encodings.js';
import { codedEtag, codingFor } from './compression.js';

/**
 * Every body an Express app builds goes through its `res.send`: `res.json` ends there, and so
 * do problem bodies (error-handler.ts), /metrics, bootstrap and the operations routes. This
 * gives the app's responses (`app.response`, the app's own prototype, so no other app is
 * touched) a `send` that compresses what it sends per request when the request allows it
 * (contract section 4), with a `Content-Length` of the bytes sent, `HEAD` included. The body is
 * whole when `send` sees it, so nothing wraps `write`/`end` or streams. Cached resources and
 * files never come here: they are sent from their stored bytes (send-encoded.ts).
 *
 * The compressed-sending packages were not used: `compression` negotiates with `negotiator`,
 * which gives an unlisted `identity` the lowest listed weight instead of 1 (`gzip;q=0.5` would
 * get gzip), skips `HEAD`, and drops `Content-Length` for chunked transfer.
 */
export function compressSentBodies(response: Response): void {
  const send = response.send;
  response.send = function compressedSend(this: Response, body?: unknown): Response {
    if (
      this.req.compression === undefined ||
      (typeof body !== 'string' && !Buffer.isBuffer(body))
    ) {
      // Objects come back here as JSON text through `res.json`.
      return send.call(this, body);
    }
    return sendNegotiated(this, send, body);
  };
}

type Send = Response['send'];

/** Sends a string or Buffer body in the coding the request and the body call for. */
function sendNegotiated(res: Response, send: Send, body: string | Buffer): Response {
  const type = res.get('Content-Type');
  // What Express would make it: a string without a type is HTML, a Buffer octets.
  const contentType = type ?? (typeof body === 'string' ? 'text/html' : 'application/octet-stream');
  const length = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  const coding = codingFor(res.req, res, length, contentType);
  if (coding === 'identity') return send.call(res, body);
  const etag = res.get('ETag');
  if (etag !== undefined) res.setHeader('ETag', codedEtag(etag, coding));
  // Express answers a matching If-None-Match with 304, which carries no Content-Encoding.
  if (res.req.fresh) return send.call(res, body);
  if (typeof body === 'string') res.setHeader('Content-Type', utf8(contentType));
  return sendCompressed(res, send, body, coding, etag);
}

/** `etag`: the validator before it was marked with the coding, put back if compressing fails. */
function sendCompressed(
  res: Response,
  send: Send,
  body: string | Buffer,
  coding: Coding,
  etag: string | undefined,
): Response {
  let bytes: Buffer;
  try {
    bytes = compress(typeof body === 'string' ? Buffer.from(body, 'utf8') : body, coding);
  } catch {
    // zlib does not fail on a buffer; if it ever did, the body is still worth sending.
    if (etag !== undefined) res.setHeader('ETag', etag);
    return send.call(res, body);
  }
  res.setHeader('Content-Encoding', coding);
  return send.call(res, bytes);
}

/** The media type with `charset=utf-8`, as Express's `send` labels a string it encodes. */
function utf8(contentType: string): string {
  return /;\s*charset=/i.test(contentType)
    ? contentType.replace(/(;\s*charset=)[^;]*/i, '$1utf-8')
    : `${contentType}; charset=utf-8`;
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import vary from 'vary';
import type { Stage } from './edge.js';
import { chooseEncoding, type ContentCoding } from './content-coding.js';

/** COMPRESSION=on (contract sections 1 and 4): answers of at least `minBytes` may be compressed. */
export interface CompressionPolicy {
  readonly minBytes: number;
}

declare module 'http' {
  interface IncomingMessage {
    /** Set in front of every stage that answers when COMPRESSION=on; undefined when off. */
    compression?: CompressionPolicy;
  }
}

/**
 * Hands the policy to whatever answers the request (the hit path, the routers, Express's
 * `res.send`), so none of them needs the configuration: with COMPRESSION=off this stage is not
 * there and every answer is sent as it is.
 */
export function createCompressionStage(policy: CompressionPolicy): Stage {
  return (req, _res, next) => {
    req.compression = policy;
    next();
  };
}

/**
 * Media types sent compressed (contract section 4): JSON, LD-JSON, problem+json, HTML, CSS,
 * JavaScript, SVG and Prometheus text (`text/plain`; OpenMetrics text is listed with it).
 * `text/event-stream` is not among them: an event stream is never compressed.
 */
const TEXT_TYPES = new Set([
  'application/json',
  'application/ld+json',
  'application/problem+json',
  'text/html',
  'text/css',
  'text/javascript',
  'application/javascript',
  'image/svg+xml',
  'text/plain',
  'application/openmetrics-text',
]);

export function isCompressibleType(contentType: string): boolean {
  const semicolon = contentType.indexOf(';');
  const mediaType = semicolon < 0 ? contentType : contentType.slice(0, semicolon);
  return TEXT_TYPES.has(mediaType.trim().toLowerCase());
}

/** `no-transform` (RFC 9111 §5.2.2.6): no intermediary, the gateway included, may recode it. */
const NO_TRANSFORM = /(?:^|,)\s*no-transform\s*(?:,|$)/i;

/** Statuses whose answer has a body that may be recoded: no 1xx, 204, 205, 206 or 3xx. */
const hasRecodableBody = (status: number) =>
  (status >= 200 && status < 300 && status !== 204 && status !== 205 && status !== 206) ||
  status >= 400;

/**
 * The coding an answer of `length` bytes of `contentType` goes out in. A compressible answer
 * (COMPRESSION=on, a text type, at least COMPRESSION_MIN_BYTES, a status with a body, no
 * `no-transform`, not already coded) depends on `Accept-Encoding` whichever coding it gets, so
 * it says `Vary: Accept-Encoding` (merged with what is there) even when sent as it is; any
 * other answer is identity and says nothing.
 */
export function codingFor(
  req: IncomingMessage,
  res: ServerResponse,
  length: number,
  contentType: string,
): ContentCoding {
  const policy = req.compression;
  if (
    policy === undefined ||
    length < policy.minBytes ||
    !hasRecodableBody(res.statusCode) ||
    !isCompressibleType(contentType) ||
    res.hasHeader('Content-Encoding') ||
    NO_TRANSFORM.test(String(res.getHeader('Cache-Control') ?? ''))
  ) {
    return 'identity';
  }
  vary(res, 'Accept-Encoding');
  return chooseEncoding(req.headers['accept-encoding']);
}

/**
 * The entity-tag of a coded representation (RFC 9110 §8.8.3: each coding is a representation
 * of its own): `"<opaque>-br"` or `"<opaque>-gz"` for the identity tag `"<opaque>"`, `W/` kept.
 */
export function codedEtag(etag: string, coding: ContentCoding): string {
  if (coding === 'identity' || !etag.endsWith('"')) return etag;
  return `${etag.slice(0, -1)}-${coding === 'br' ? 'br' : 'gz'}"`;
}

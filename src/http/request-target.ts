import type { IncomingMessage } from 'node:http';

/**
 * The request target as every later stage reads it: path and query split once, at the edge
 * (issue 17: the hit path and the router read one target two ways, so `q=laptop#x` was a hit
 * for one key and a miss for another).
 */
export interface RequestTarget {
  readonly path: string;
  /** What follows the first `?`, byte for byte; '' without one. */
  readonly query: string;
}

declare module 'http' {
  interface IncomingMessage {
    /** Set by the edge; undefined when the target was refused. */
    target?: RequestTarget;
  }
}

/** `scheme://authority` at the start of an absolute-form target (RFC 9112 §3.2.2). */
const ABSOLUTE_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;

/**
 * Reads `req.url` once. A fragment has no place in a request target (RFC 9112 §3.2): a target
 * holding `#` is refused (undefined). An absolute-form target is taken as the origin-form it
 * names, every byte of path and query kept, and `req.url` is rewritten to it so Express's
 * router reads the same target. Only the first `?` splits path from query, as Express does.
 */
export function readRequestTarget(req: IncomingMessage): RequestTarget | undefined {
  let url = req.url ?? '/';
  if (url.includes('#')) return undefined;
  if (!url.startsWith('/') && url !== '*') {
    const authority = ABSOLUTE_FORM.exec(url);
    if (authority === null) return undefined;
    url = url.slice(authority[0].length);
    if (!url.startsWith('/')) url = `/${url}`;
    req.url = url;
  }
  const question = url.indexOf('?');
  const target =
    question < 0
      ? { path: url, query: '' }
      : { path: url.slice(0, question), query: url.slice(question + 1) };
  req.target = target;
  return target;
}

/** Whether the request says it carries a body: a GET with one is the app's to refuse. */
export function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

import type { IncomingMessage } from 'node:http';
import accepts from 'accepts';
import type { SearchFormat } from '../../upstreams/search/search-client.js';

const FORMATS: Record<string, SearchFormat> = {
  'application/json': 'json',
  'application/ld+json': 'ld+json',
};
const TYPES = Object.keys(FORMATS);

/**
 * The representation a request's Accept header selects (contract section 2: LD-JSON on
 * `Accept: application/ld+json`), negotiated as Express's `req.accepts` does; undefined when
 * neither form is acceptable (a 406).
 */
export function negotiateFormat(req: IncomingMessage): SearchFormat | undefined {
  // No preference is by far the common case: the first type, as negotiation would pick.
  if (req.headers.accept === undefined) return 'json';
  const type = accepts(req).type(TYPES) as string | false;
  return type === false ? undefined : FORMATS[type];
}

/*
 * Byte-exact handling of the `rp` query parameter (contract section 5, search document 4.2).
 * Nothing here decodes or re-serialises a URL: the query is split on '&' as raw text, only
 * segments whose name is exactly `rp` followed by '=' get a new value, and every other byte
 * (order, escapes, '+' vs '%20', flags without '=', the fragment) is copied as given.
 */

interface UrlParts {
  /** Everything up to and including '?'. */
  head: string;
  query: string;
  /** '#' and everything after it, or ''. */
  fragment: string;
}

function splitUrl(url: string): UrlParts | undefined {
  const hash = url.indexOf('#');
  const beforeFragment = hash < 0 ? url : url.slice(0, hash);
  const question = beforeFragment.indexOf('?');
  if (question < 0) return undefined;
  return {
    head: beforeFragment.slice(0, question + 1),
    query: beforeFragment.slice(question + 1),
    fragment: hash < 0 ? '' : url.slice(hash),
  };
}

/** The raw value of the first `rp=` parameter, or undefined when the URL has none. */
export function readRp(url: string): string | undefined {
  const parts = splitUrl(url);
  if (!parts) return undefined;
  for (const segment of parts.query.split('&')) {
    if (segment.startsWith('rp=')) return segment.slice(3);
  }
  return undefined;
}

/** The URL with the value of every `rp=` parameter replaced by `value`; otherwise unchanged. */
export function withRp(url: string, value: string): string {
  const parts = splitUrl(url);
  if (!parts) return url;
  const query = parts.query
    .split('&')
    .map((segment) => (segment.startsWith('rp=') ? `rp=${value}` : segment))
    .join('&');
  return `${parts.head}${query}${parts.fragment}`;
}

/**
 * A predicate for "points at the search service's redirect endpoint": same origin as
 * SEARCH_BASE_URL, no userinfo, and exactly its `/v1/url` path. Relative or unparsable URLs
 * do not point at it. The service's own spelling of its links is recognised without parsing;
 * any other spelling is parsed once.
 */
export function createRedirectUrlMatcher(searchBaseUrl: string): (url: string) => boolean {
  const endpoint = new URL(`${searchBaseUrl}/v1/url`);
  const canonical = `${endpoint.origin}${endpoint.pathname}`;
  return (url) => {
    if (url.startsWith(canonical)) {
      const next = url.charAt(canonical.length);
      if (next === '' || next === '?' || next === '#') return true;
    }
    const parsed = URL.parse(url);
    return (
      parsed !== null &&
      parsed.origin === endpoint.origin &&
      parsed.username === '' &&
      parsed.password === '' &&
      parsed.pathname === endpoint.pathname
    );
  };
}

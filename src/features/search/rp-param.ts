/*
 * Byte-exact handling of the `rp` query parameter (contract section 5, search document 4.2).
 * Nothing here decodes or re-serialises a URL: the query is split on '&' as raw text, only
 * segments whose name is exactly `rp` followed by '=' get a new value, and every other byte
 * (order, escapes, '+' vs '%20', flags without '=', the fragment) is copied as given.
 */

/** Where the query of `url` ends: at its fragment's '#', or at the end. */
function queryEnd(url: string): number {
  const hash = url.indexOf('#');
  return hash < 0 ? url.length : hash;
}

/** Where the query of `url` starts (just past '?'), or -1 when it has none before `end`. */
function queryStart(url: string, end: number): number {
  const question = url.indexOf('?');
  return question < 0 || question >= end ? -1 : question + 1;
}

/** Where the segment starting at `start` ends: its '&', or the query's end. */
function segmentEnd(url: string, start: number, end: number): number {
  const amp = url.indexOf('&', start);
  return amp < 0 || amp > end ? end : amp;
}

/** The start of the first segment at or after `from` that is `rp=` and a value, or -1. */
function nextRpSegment(url: string, from: number, end: number): number {
  for (let start = from; start <= end;) {
    const stop = segmentEnd(url, start, end);
    if (stop - start >= 3 && url.startsWith('rp=', start)) return start;
    start = stop + 1;
  }
  return -1;
}

/** The raw value of the first `rp=` parameter, or undefined when the URL has none. */
export function readRp(url: string): string | undefined {
  const end = queryEnd(url);
  const query = queryStart(url, end);
  const at = query < 0 ? -1 : nextRpSegment(url, query, end);
  return at < 0 ? undefined : url.slice(at + 3, segmentEnd(url, at, end));
}

/**
 * The URL with the value of every `rp=` parameter replaced by `value`; otherwise unchanged.
 * The bytes between the values are copied in slices: a search answer has dozens of these URLs,
 * and splitting each query into an array of segments cost a miss more than the rest of the rule.
 */
export function withRp(url: string, value: string): string {
  const end = queryEnd(url);
  const query = queryStart(url, end);
  let rewritten = '';
  let copied = 0;
  for (let at = query < 0 ? -1 : nextRpSegment(url, query, end); at >= 0;) {
    const valueEnd = segmentEnd(url, at, end);
    rewritten += `${url.slice(copied, at + 3)}${value}`;
    copied = valueEnd;
    at = valueEnd < end ? nextRpSegment(url, valueEnd + 1, end) : -1;
  }
  return copied === 0 ? url : `${rewritten}${url.slice(copied)}`;
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

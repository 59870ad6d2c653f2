import type { SearchFormat } from '../../upstreams/search/search-client.js';

/** The search document's two representations, by the media type Accept chose. */
export const SEARCH_FORMATS: Readonly<Record<string, SearchFormat>> = {
  'application/json': 'json',
  'application/ld+json': 'ld+json',
};

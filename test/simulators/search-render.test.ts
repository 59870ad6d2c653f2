import { describe, expect, it } from 'vitest';
import { createSearchCatalogue } from '../../simulators/search/search-catalogue.js';
import { renderResultList, renderResultListJson } from '../../simulators/search/search-render.js';

/** The words of every category, so the pages below cover the whole catalogue. */
const QUERIES = ['wireless headphones', 'coffee', 'shoes laptops', 'books knives', 'lamp', 'games'];

describe('renderResultListJson', () => {
  it('when a page is served, then its bytes are JSON.stringify of the rendered list, whatever the page, format, origin, session or next link', () => {
    const catalogue = createSearchCatalogue({ seed: 11 });
    let pages = 0;
    // Twice: the second pass is served from the cached products.
    for (let pass = 0; pass < 2; pass += 1) {
      for (const [i, query] of QUERIES.entries()) {
        const ranked = catalogue.search(query);
        for (const start of [0, 3, 10]) {
          for (const ld of [false, true]) {
            const page = ranked.slice(start, start + 7);
            const options = {
              origin: i % 2 ? 'http://127.0.0.1:4010' : 'https://search.example',
              ld,
              // A session token a link must encode, and a plain one.
              sid: i % 3 ? `sid-${i}` : 'a b&c=d/é',
            };
            const next =
              start === 3 ? undefined : `${options.origin}/v1/search?q=x&start=${start + 7}`;
            const expected = { ...renderResultList(page, start, next, options), queryDuration: 12 };
            expect(renderResultListJson(page, start, next, options, () => 12)).toBe(
              JSON.stringify(expected),
            );
            pages += 1;
          }
        }
      }
    }
    expect(pages).toBe(72);
  });
});

import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createSearchCatalogue } from '../../simulators/search/search-catalogue.js';
import { renderResultList } from '../../simulators/search/search-render.js';
import { ResultList, ResultListInPlace } from '../../src/upstreams/search/search-schemas.js';

/** Result lists as the search simulator renders them, JSON and LD-JSON, parsed from the wire. */
function bodies(): unknown[] {
  const catalogue = createSearchCatalogue({ seed: 3 });
  const page = catalogue.search('wireless headphones').slice(0, 6);
  return [false, true].map((ld): unknown => {
    const list = renderResultList(page, 0, 'http://s/n', {
      origin: 'http://s.test',
      ld,
      sid: 'sid',
    });
    return JSON.parse(JSON.stringify(list));
  });
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const REPLACEMENTS: Json[] = [null, true, 0, -1, 1.5, 2 ** 53, 'x', '', [], {}, [1], { a: 1 }];

/** A value of a list, by its path from the root: where one set of mutants is made. */
interface Site {
  root: Json;
  path: (string | number)[];
}

/** Every value of every list (not the roots themselves), in document order. */
function sitesOf(roots: Json[]): Site[] {
  const sites: Site[] = [];
  const walk = (root: Json, node: Json, path: (string | number)[]) => {
    if (path.length > 0) sites.push({ root, path });
    if (Array.isArray(node)) node.forEach((item, i) => walk(root, item, [...path, i]));
    else if (node !== null && typeof node === 'object')
      for (const [key, value] of Object.entries(node)) walk(root, value, [...path, key]);
  };
  for (const root of roots) walk(root, root, []);
  return sites;
}

/** Mutants made at each site: the value replaced by each of REPLACEMENTS, and removed. */
const MUTANTS_PER_SITE = REPLACEMENTS.length + 1;

/** The site's value replaced by each of REPLACEMENTS, then the key or item removed. */
function* mutantsAt({ root, path }: Site): Generator<Json> {
  const last = path[path.length - 1]!;
  /** A fresh copy of the list, and the object or array in it that holds the site's value. */
  const copy = () => {
    const tree = JSON.parse(JSON.stringify(root)) as Json;
    let parent = tree as Record<string | number, Json>;
    for (const step of path.slice(0, -1)) parent = parent[step] as Record<string | number, Json>;
    return { tree, parent };
  };
  for (const replacement of REPLACEMENTS) {
    const { tree, parent } = copy();
    parent[last] = replacement;
    yield tree;
  }
  const { tree, parent } = copy();
  if (Array.isArray(parent)) parent.splice(Number(last), 1);
  else delete parent[last];
  yield tree;
}

/*
 * The mutants are many (9,282 today: two parses and a deep comparison each), and the work is
 * CPU: one test of them all ran past the 20 s test timeout on a loaded machine (issue 31, item
 * 10). So the tests size themselves by count, not by the runner's timeout: each takes a slice
 * of about MUTANTS_PER_TEST, and more lists or more fields make more slices, never longer
 * ones. Sites are dealt out in turn, so every slice holds values from every part of both lists
 * and sees both verdicts often; together the slices cover every mutant once.
 */
const MUTANTS_PER_TEST = 300;
const SITES = sitesOf(bodies() as Json[]);
const SLICES = Math.ceil((SITES.length * MUTANTS_PER_SITE) / MUTANTS_PER_TEST);
const slice = (n: number) => SITES.filter((_, i) => i % SLICES === n);

describe('ResultListInPlace: zod verdicts without zod copies', () => {
  it('when a valid list is checked, then it is accepted as the very object given, equal to what zod makes of it', () => {
    for (const body of bodies()) {
      const result = ResultListInPlace.safeParse(body);
      expect(result.success).toBe(true);
      expect(result.data).toBe(body);
      expect(result.data).toEqual(ResultList.parse(body));
    }
  });

  for (let n = 0; n < SLICES; n += 1) {
    const sites = slice(n);
    it(`when any value of a list is replaced or removed (slice ${n + 1} of ${SLICES}: ${sites.length * MUTANTS_PER_SITE} mutants), then the verdict is zod’s, and so is the error`, () => {
      let accepted = 0;
      let rejected = 0;
      const disagreements: unknown[] = [];
      for (const site of sites) {
        for (const mutant of mutantsAt(site)) {
          const zod = ResultList.safeParse(mutant);
          const inPlace = ResultListInPlace.safeParse(mutant);
          if (zod.success) accepted += 1;
          else rejected += 1;
          // Equal values, key order aside: zod's copy puts the keys it knows first.
          const same = zod.success
            ? inPlace.success && isDeepStrictEqual(inPlace.data, zod.data)
            : !inPlace.success && isDeepStrictEqual(inPlace.error.issues, zod.error.issues);
          if (!same) disagreements.push(mutant);
        }
      }
      expect(disagreements).toEqual([]);
      // Both verdicts occur often in every slice (44 and 169 at the least today; 2,456 and
      // 6,826 in all): the comparison is not one-sided.
      expect(accepted).toBeGreaterThan(20);
      expect(rejected).toBeGreaterThan(20);
    });
  }

  it('when the scores do not match the items one for one, then the refinement rejects it as zod does', () => {
    const [body] = bodies() as { itemScore: number[] }[];
    body!.itemScore.pop();
    const result = ResultListInPlace.safeParse(body);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toBe('itemScore must have one score per item');
  });

  it('when a product carries a "__proto__" key, then it stays data on that product and pollutes nothing', () => {
    const body = JSON.parse(
      '{"itemListElement":[{"name":"n","offers":{"url":"u","seller":{"name":"s"}},"__proto__":{"polluted":1}}],"itemScore":[1],"queryDuration":0}',
    ) as ResultList;
    const result = ResultListInPlace.safeParse(body);
    expect(result.success).toBe(true);
    expect(Object.hasOwn(result.data!.itemListElement[0]!, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(JSON.stringify(result.data)).toContain('"__proto__":{"polluted":1}');
  });
});

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

/** Every value of the tree replaced by each of REPLACEMENTS, and every key and item removed. */
function* mutations(root: Json): Generator<Json> {
  const clone = (): Json => JSON.parse(JSON.stringify(root)) as Json;
  const paths: (string | number)[][] = [];
  const walk = (node: Json, path: (string | number)[]) => {
    if (path.length > 0) paths.push(path);
    if (Array.isArray(node)) node.forEach((item, i) => walk(item, [...path, i]));
    else if (node !== null && typeof node === 'object')
      for (const [key, value] of Object.entries(node)) walk(value, [...path, key]);
  };
  walk(root, []);
  for (const path of paths) {
    const at = (tree: Json) => {
      let parent = tree as Record<string | number, Json>;
      for (const step of path.slice(0, -1)) parent = parent[step] as Record<string | number, Json>;
      return { parent, last: path[path.length - 1]! };
    };
    for (const replacement of REPLACEMENTS) {
      const tree = clone();
      const { parent, last } = at(tree);
      parent[last] = replacement;
      yield tree;
    }
    const tree = clone();
    const { parent, last } = at(tree);
    if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else delete parent[last];
    yield tree;
  }
}

describe('ResultListInPlace: zod verdicts without zod copies', () => {
  it('when a valid list is checked, then it is accepted as the very object given, equal to what zod makes of it', () => {
    for (const body of bodies()) {
      const result = ResultListInPlace.safeParse(body);
      expect(result.success).toBe(true);
      expect(result.data).toBe(body);
      expect(result.data).toEqual(ResultList.parse(body));
    }
  });

  it('when any value of a list is replaced or removed, then the verdict is zod’s, and so is the error', () => {
    let accepted = 0;
    let rejected = 0;
    const disagreements: unknown[] = [];
    for (const body of bodies()) {
      for (const mutant of mutations(body as Json)) {
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
    // Both verdicts occur often: the comparison is not one-sided.
    expect(accepted).toBeGreaterThan(500);
    expect(rejected).toBeGreaterThan(500);
  });

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

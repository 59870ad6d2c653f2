import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROUTE_TABLE } from '../../src/features/route-table.js';

/*
 * The README's route list and the frontend guide's route table are written for people; the
 * route table (src/features/route-table.ts) is what the gateway serves. Every documented route
 * of the table is in both, so a route added to the table and not to the docs fails here.
 */

const ROOT = new URL('../../', import.meta.url).pathname;
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('the docs list every route of the route table', () => {
  for (const page of ['README.md', 'docs/frontend.md']) {
    it(`when ${page} is read, then it names every documented route with its method`, () => {
      const text = read(page);
      const missing = ROUTE_TABLE.filter((route) => !route.undocumented)
        .map((route) => `${route.method.toUpperCase()} ${route.path}`)
        .filter((route) => !new RegExp(`\`${escape(route)}[\`?]`).test(text));
      expect(missing).toEqual([]);
    });
  }
});

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/*
 * The README is a newcomer's page and docs/ holds the rest: every docs page is linked from the
 * README, and every relative link (and image) between them names a file that exists and, with a
 * #fragment, a heading of that file, slugged as GitHub slugs headings.
 */

const ROOT = new URL('../../', import.meta.url).pathname;
const DOCS = join(ROOT, 'docs');
const pages = [
  join(ROOT, 'README.md'),
  ...readdirSync(DOCS)
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(DOCS, name)),
];

/** The text outside fenced code blocks and inline code spans. */
function prose(markdown: string): string {
  let fenced = false;
  const lines = markdown.split('\n').filter((line) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
  return lines.join('\n').replace(/`[^`]*`/g, (span) => (span.includes('](') ? '' : span));
}

/** GitHub's heading anchors (github-slugger): lower case, punctuation dropped, spaces to '-'. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const slugs = new Set<string>();
  for (const [, heading] of prose(markdown).matchAll(/^#{1,6} +(.+?) *$/gm)) {
    const base = heading!
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    slugs.add(count === 0 ? base : `${base}-${count}`);
  }
  return slugs;
}

/** Every relative link and image target of a page: [text](target) and ![alt](target). */
function links(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

describe('the README and docs/', () => {
  it('when the README is read, then it links every page of docs/', () => {
    const linked = new Set(
      links(readFileSync(join(ROOT, 'README.md'), 'utf8')).map((target) =>
        join(ROOT, target.split('#')[0]!),
      ),
    );
    const unlinked = pages.slice(1).filter((page) => !linked.has(page));
    expect(unlinked.map((page) => relative(ROOT, page))).toEqual([]);
  });

  it('when every relative link is followed, then its file exists and its #fragment names a heading there', () => {
    const broken = pages.flatMap((page) =>
      links(readFileSync(page, 'utf8')).flatMap((target) => {
        const [path, fragment] = target.split('#');
        const file = path ? join(dirname(page), path) : page;
        const where = `${relative(ROOT, page)}: ${target}`;
        if (!existsSync(file)) return [`${where} (no such file)`];
        if (fragment === undefined) return [];
        return anchors(readFileSync(file, 'utf8')).has(fragment) ? [] : [`${where} (no heading)`];
      }),
    );
    expect(broken).toEqual([]);
  });

  it('when the pages are read, then there are links to check', () => {
    expect(pages.length).toBeGreaterThan(1);
    expect(pages.flatMap((page) => links(readFileSync(page, 'utf8'))).length).toBeGreaterThan(
      pages.length,
    );
  });
});

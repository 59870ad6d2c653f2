import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { withEncodings } from '../cache/encodings.js';
import { toEncodable, type EncodableRepresentation } from './send-encoded.js';

/**
 * The text files a served frontend is made of, by extension, with the media type
 * express.static would give them (mime-types), so either way of serving says the same.
 */
const TEXT_FILE_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.jsonld': 'application/ld+json',
  '.svg': 'image/svg+xml',
  '.txt': 'text/plain; charset=utf-8',
};

/**
 * At most this many bytes of files are held (contract section 6: every in-process cache is
 * bounded in bytes); their compressed forms come on top, a third of it or less for text.
 * A frontend's built text is far smaller; files past the budget are served from disk as they are.
 */
export const HELD_TEXT_MAX_BYTES = 16 * 1024 * 1024;

export interface HeldFile extends EncodableRepresentation {
  /** Where it was read from, for the headers that depend on its name. */
  readonly path: string;
}

export interface TextFiles {
  /** The file a request path names (`/` and `/dir/` name their `index.html`), if held. */
  get(requestPath: string): HeldFile | undefined;
}

/**
 * Reads the text files under `root` that are worth compressing (at least `minBytes`) into
 * memory at start-up and compresses each once, right away and off the event loop, so that
 * requests find them ready: they do not change while the gateway runs. Dotfiles and dot
 * directories are skipped, as express.static skips them; so are symbolic links.
 */
export function holdTextFiles(root: string, minBytes: number): TextFiles {
  const held = new Map<string, HeldFile>();
  let budget = HELD_TEXT_MAX_BYTES;
  for (const path of filesUnder(root)) {
    const contentType = TEXT_FILE_TYPES[extname(path).toLowerCase()];
    if (contentType === undefined) continue;
    const size = statSync(path).size;
    if (size < minBytes || size > budget) continue;
    budget -= size;
    const file: HeldFile = { path, ...toEncodable(readFileSync(path), contentType) };
    const names = namesOf(relative(root, path));
    for (const name of names) held.set(name, file);
    withEncodings(file).then(
      (encoded) => {
        for (const name of names) held.set(name, encoded);
      },
      // Never for a buffer; the file is then compressed on its first request instead.
      () => undefined,
    );
  }
  return {
    get(requestPath) {
      let decoded: string;
      try {
        decoded = decodeURIComponent(requestPath);
      } catch {
        return undefined;
      }
      return held.get(decoded);
    },
  };
}

/** The request paths of a file: its own, and its directory's for an `index.html`. */
function namesOf(relativePath: string): string[] {
  const name = `/${relativePath.split(sep).join('/')}`;
  return name.endsWith('/index.html') ? [name, name.slice(0, -'index.html'.length)] : [name];
}

function* filesUnder(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* filesUnder(path);
    else if (entry.isFile()) yield path;
  }
}

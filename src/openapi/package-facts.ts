import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What the OpenAPI document says about this build, from package.json. */
export interface PackageFacts {
  readonly version: string;
  readonly license: string;
  /** `homepage`: where to ask about the API, when package.json says. */
  readonly homepage?: string;
}

const NAME = 'bff-gateway';

/**
 * npm's word for a package that grants no licence, which package.json means by
 * `"private": true` with no `license` field.
 */
const NO_LICENSE = 'UNLICENSED';

/**
 * The gateway's package.json, found by walking up from this module: the same code runs from
 * src/openapi under tsx and vitest and from dist/src/openapi once compiled (and from
 * /app/dist/src/openapi in the image, which copies package.json to /app), so no fixed number
 * of `..` is right for all of them. A package.json of another name (a dependency's) is passed.
 */
export function readPackageFacts(from: string = import.meta.url): PackageFacts {
  const start = dirname(fileURLToPath(from));
  for (let dir = start; ; dir = dirname(dir)) {
    const facts = factsIn(join(dir, 'package.json'));
    if (facts) return facts;
    if (dirname(dir) === dir) break;
  }
  throw new Error(`no package.json named ${NAME} above ${start}`);
}

function factsIn(path: string): PackageFacts | undefined {
  if (!existsSync(path)) return undefined;
  const json = JSON.parse(readFileSync(path, 'utf8')) as {
    name?: string;
    version?: string;
    license?: string;
    homepage?: string;
  };
  if (json.name !== NAME || json.version === undefined) return undefined;
  return {
    version: json.version,
    license: json.license ?? NO_LICENSE,
    ...(json.homepage === undefined ? {} : { homepage: json.homepage }),
  };
}

import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { API_TYPES_FILE, generateApiTypes, sessionModeDocument } from '../helpers/api-types.js';
import { createTestGateway } from '../helpers/test-gateway.js';

/*
 * The demo page's API types (issue 33) are openapi-typescript's output for the document a
 * session-mode gateway serves, committed as the generator writes them: a route or answer schema
 * changed without `npm run api:types` fails here, and a page that reads a renamed field fails
 * its type check.
 */

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const committed = readFileSync(API_TYPES_FILE, 'utf8');
const temporary: string[] = [];
afterAll(() => {
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

type Json = Record<string, unknown>;

/** A copy of the document with one property of a component schema renamed. */
function renamed(document: object, at: readonly string[], from: string, to: string): object {
  const copy = structuredClone(document) as Json;
  let schema = copy;
  for (const key of at) schema = schema[key] as Json;
  const properties = schema['properties'] as Json;
  properties[to] = properties[from];
  delete properties[from];
  schema['required'] = (schema['required'] as string[]).map((name) => (name === from ? to : name));
  return copy;
}

/** The page's own type check (its tsconfig), on a copy of the page with these API types. */
async function checkPage(types: string): Promise<{ ok: boolean; output: string }> {
  const page = mkdtempSync(join(tmpdir(), 'bff-page-check-'));
  temporary.push(page);
  cpSync(join(root, 'simulators/demo-page'), page, { recursive: true });
  writeFileSync(join(page, 'types/gateway-api.d.ts'), types);
  // Outside the repository there is no node_modules to find openapi-fetch's types in.
  const openapiFetch = createRequire(import.meta.url).resolve('openapi-fetch');
  writeFileSync(
    join(page, 'tsconfig.check.json'),
    JSON.stringify({
      extends: './tsconfig.json',
      compilerOptions: {
        paths: { 'openapi-fetch': [openapiFetch.replace(/\.cjs$/, '.d.mts')] },
      },
    }),
  );
  const tsc = join(root, 'node_modules/typescript-7/bin/tsc');
  try {
    await run(process.execPath, [tsc, '-p', join(page, 'tsconfig.check.json'), '--noEmit']);
    return { ok: true, output: '' };
  } catch (error) {
    return { ok: false, output: String((error as { stdout?: unknown }).stdout) };
  }
}

describe("the demo page's API types (simulators/demo-page/types/gateway-api.d.ts)", () => {
  it('when a session-mode gateway serves its document, then the committed types are what openapi-typescript makes of it, byte for byte', async () => {
    const gw = await createTestGateway({ searchOrigin: 'http://127.0.0.1:9' });
    try {
      const served = await request(gw.app).get('/openapi.json');
      expect(served.status).toBe(200);
      // The document `npm run api:types` generates from is the one served.
      expect(served.body).toEqual(sessionModeDocument());
      expect(committed, 'run `npm run api:types`').toBe(
        await generateApiTypes(served.body as object),
      );
    } finally {
      await gw.close();
    }
  });

  it("when openapi-typescript's own command line reads the document, then it writes the committed file", async () => {
    // Run outside the repository, so that no Redocly configuration there changes what it reads.
    const cwd = mkdtempSync(join(tmpdir(), 'bff-api-types-'));
    temporary.push(cwd);
    writeFileSync(join(cwd, 'openapi.json'), JSON.stringify(sessionModeDocument()));
    const cli = join(root, 'node_modules/openapi-typescript/bin/cli.js');
    const { stdout } = await run(process.execPath, [cli, 'openapi.json'], { cwd });
    expect(stdout, 'run `npm run api:types`').toBe(committed);
  });

  it('when an answer schema changes and the types are not regenerated, then they no longer match', async () => {
    const edited = renamed(
      sessionModeDocument(),
      ['components', 'schemas', 'ChannelList', 'properties', 'channels', 'items'],
      'private',
      'is_private',
    );
    const generated = await generateApiTypes(edited);
    expect(generated).toContain('is_private: boolean;');
    expect(committed).not.toBe(generated);
  });

  it("when a field the page reads is renamed in an answer schema and the types regenerated, then the page's type check fails", async () => {
    const today = await checkPage(committed);
    expect(today.output).toBe('');
    expect(today.ok).toBe(true);
    const edited = renamed(
      sessionModeDocument(),
      ['components', 'schemas', 'ChannelFolders', 'properties', 'channel_folders', 'items'],
      'name',
      'title',
    );
    const broken = await checkPage(await generateApiTypes(edited));
    expect(broken.ok).toBe(false);
    expect(broken.output).toMatch(/app\.js\(\d+,\d+\): error TS\d+: .*'unknown'/);
  });
});

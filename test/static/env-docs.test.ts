import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cacheVariableSchemas } from '../../config/cache-variables.js';
import { ENV_VARIABLES } from '../../config/env-schema.js';
import { ROUTE_TABLE } from '../../src/features/route-table.js';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

describe('configuration documentation', () => {
  // The environment's own variables, and those each cached route of the table brings.
  const schema = [...ENV_VARIABLES, ...Object.keys(cacheVariableSchemas(ROUTE_TABLE))].sort();

  it('when .env.example is read, then it lists exactly the schema variables', () => {
    const listed = [...read('.env.example').matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=/gm)].map(
      (m) => m[1]!,
    );
    expect([...new Set(listed)].sort()).toEqual(schema);
  });

  it('when the configuration table of docs/configuration.md is read, then it lists exactly the schema variables', () => {
    const page = read('docs/configuration.md');
    const start = page.indexOf('# Configuration');
    const end = page.indexOf('\n## ', start);
    expect(start, 'a "# Configuration" heading').toBeGreaterThanOrEqual(0);
    const section = page.slice(start, end === -1 ? undefined : end);
    const listed = [...section.matchAll(/^\| `([A-Z][A-Z0-9_]*)` +\|/gm)].map((m) => m[1]!);
    expect([...new Set(listed)].sort()).toEqual(schema);
  });

  it('when .env.example is loaded as the environment, then it is a valid configuration as it is (the compose simulators)', async () => {
    const { loadConfig } = await import('../../config/load-config.js');
    const env = Object.fromEntries(
      [...read('.env.example').matchAll(/^([A-Z][A-Z0-9_]*)=(.*)$/gm)].map((m) => [m[1]!, m[2]!]),
    );
    const config = loadConfig(env, ROUTE_TABLE);
    expect(new URL(config.search.baseUrl).hostname).toBe('simulators');
  });
});

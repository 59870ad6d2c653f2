import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PROMTOOL } from '../helpers/promtool.js';

/*
 * The alert rules of docs/operations.md (Metrics) are meant to be copied into a Prometheus:
 * promtool must accept them, and each must name only metric families the gateway exports
 * (test/integration/metrics.test.ts checks the families themselves).
 */

const operations = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
const rules = /```yaml\n(# bff-gateway\.rules\.yml\n[\s\S]*?)```/.exec(operations)?.[1];
const dir = mkdtempSync(join(tmpdir(), 'bff-rules-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const FAMILIES = [
  'http_server_request_duration_seconds',
  'gateway_upstream_request_duration_seconds',
  'gateway_cache_requests_total',
  'gateway_circuit_breaker_state',
  'gateway_session_writes_unreplicated_total',
  'gateway_cache_store_skipped_total',
];

describe('the alert rules of docs/operations.md', () => {
  it('when promtool checks them, then they are valid rules', () => {
    expect(rules, 'a ```yaml block starting with # bff-gateway.rules.yml').toBeDefined();
    const file = join(dir, 'rules.yml');
    writeFileSync(file, rules!);
    const run = spawnSync(PROMTOOL, ['check', 'rules', file], { encoding: 'utf8' });
    expect(`${run.stdout}${run.stderr}`).toContain('SUCCESS: 6 rules found');
    expect(run.status).toBe(0);
  });

  it('when their expressions are read, then they use only the families the gateway exports', () => {
    const names = [
      ...rules!.matchAll(/\b((?:gateway|http_server)_[a-z_]+?)(?:_count|_bucket|_sum)?\b[{)\s[]/g),
    ].map((m) => m[1]!);
    expect(new Set(names)).toEqual(new Set(FAMILIES));
    for (const name of names) expect(FAMILIES, name).toContain(name);
  });
});

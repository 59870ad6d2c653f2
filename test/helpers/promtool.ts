import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** promtool from Debian's prometheus package (test/setup/ensure-tools.ts extracts it). */
export const PROMTOOL = (() => {
  const extracted = fileURLToPath(
    new URL('../../node_modules/.cache/bff-test-tools/promtool', import.meta.url),
  );
  if (existsSync(extracted)) return extracted;
  execFileSync('sh', ['-c', 'command -v promtool']);
  return 'promtool';
})();

/**
 * `promtool check metrics` on an exposition: its findings, one per line ([] when clean).
 * prom-client's own default process metrics are excepted (contract section 6).
 */
export function promtoolFindings(exposition: string): string[] {
  const run = spawnSync(PROMTOOL, ['check', 'metrics'], { input: exposition, encoding: 'utf8' });
  return `${run.stdout}\n${run.stderr}`
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !/^(process_|nodejs_)/.test(line));
}

/** The value of one sample, by metric name and exact labels; undefined when absent. */
export function sample(
  exposition: string,
  name: string,
  labels: Record<string, string>,
): number | undefined {
  for (const line of exposition.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const body = line.slice(name.length + 1, line.lastIndexOf('}'));
    const found = Object.fromEntries(
      [...body.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!]),
    );
    const same =
      Object.keys(found).length === Object.keys(labels).length &&
      Object.entries(labels).every(([k, v]) => found[k] === v);
    if (same) return Number(line.slice(line.lastIndexOf('}') + 1).trim());
  }
  return undefined;
}

import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './chaos-processes.js';

/** What the production build compiles (tsconfig.build.json). */
const SOURCES = ['src', 'config', 'simulators'];

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

function builtAt(root: string): number {
  try {
    return statSync(join(root, 'dist', 'src', 'main.js')).mtimeMs;
  } catch {
    return 0;
  }
}

/**
 * Vitest global setup of the fault tests: they run the production build as a child process,
 * so a dist/ older than any source is rebuilt first. They never test a stale build.
 */
export default function buildIfStale(): void {
  const root = repoRoot();
  const newest = Math.max(...SOURCES.map((dir) => newestSource(join(root, dir))));
  if (builtAt(root) >= newest) return;
  // The same compiler as `npm run build` (TypeScript 7; see package.json).
  execFileSync(
    process.execPath,
    [join(root, 'node_modules', 'typescript-7', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
    {
      cwd: root,
      stdio: 'inherit',
    },
  );
}

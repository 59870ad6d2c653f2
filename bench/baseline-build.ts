import { execFileSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  unlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/*
 * BENCH_BASELINE=<git rev>: another revision built beside this one, so that one bench run
 * measures both builds' gateways in alternation. The revision is checked out in a throwaway
 * `git worktree` in the system's temp dir (the repository's own work tree is left alone), its
 * dependencies are this repository's node_modules (symlinked) when both lockfiles are the same
 * bytes, else its own `npm ci`, and it is built with `tsc -p tsconfig.build.json`. The worktree
 * is removed at the end, after a failure, and when the bench is interrupted.
 */

export interface BaselineBuild {
  /** As given, e.g. HEAD~1. */
  readonly rev: string;
  /** Its abbreviated commit, the rows' suffix. */
  readonly commit: string;
  readonly dir: string;
  /** The gateway's entry point in that build. */
  readonly entry: string;
  readonly dependencies: 'node_modules symlinked (same lockfile)' | 'npm ci (lockfiles differ)';
  /** Removes the worktree; safe to call more than once. */
  remove(): void;
}

/** Build output goes to stderr: stdout is the bench's table. */
const quiet = { stdio: ['ignore', 2, 2] as ['ignore', number, number] };

export function prepareBaseline(rev: string, repo: string): BaselineBuild {
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8' }).trim();
  const commit = git('rev-parse', '--short', '--verify', `${rev}^{commit}`);
  const parent = mkdtempSync(join(tmpdir(), 'bench-baseline-'));
  const dir = join(parent, 'tree');
  const modules = join(dir, 'node_modules');
  let removed = false;
  const remove = () => {
    if (removed) return;
    removed = true;
    // The link first: never let a recursive delete reach this repository's node_modules.
    if (lstatSync(modules, { throwIfNoEntry: false })?.isSymbolicLink()) unlinkSync(modules);
    try {
      git('worktree', 'remove', '--force', dir);
    } finally {
      rmSync(parent, { recursive: true, force: true });
      git('worktree', 'prune');
    }
  };
  process.once('exit', remove);
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    process.once(signal, () => process.exit(code)); // runs the 'exit' hooks: this one, the reaper
  }

  try {
    git('worktree', 'add', '--detach', dir, commit);
    const sameLockfile = readFileSync(join(repo, 'package-lock.json')).equals(
      readFileSync(join(dir, 'package-lock.json')),
    );
    process.stderr.write(`baseline ${rev} (${commit}) in ${dir}\n`);
    if (sameLockfile) symlinkSync(join(repo, 'node_modules'), modules, 'dir');
    else execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, ...quiet });
    execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: dir, ...quiet });
    const entry = join(dir, 'dist/src/main.js');
    if (!existsSync(entry)) throw new Error(`baseline ${rev}: the build made no ${entry}`);
    return {
      rev,
      commit,
      dir,
      entry,
      dependencies: sameLockfile
        ? 'node_modules symlinked (same lockfile)'
        : 'npm ci (lockfiles differ)',
      remove,
    };
  } catch (error) {
    remove();
    throw error;
  }
}

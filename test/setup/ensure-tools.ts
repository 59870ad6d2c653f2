// The test command's setup step (npm's `pretest`): what the suite needs beyond npm, found on
// this machine or installed from Debian's packages. redis-server (tests start their own),
// chromium (the browser tests drive it through playwright-core, which downloads no browser)
// and promtool (from the prometheus package, extracted without installing it: installing
// would start a Prometheus server). Nothing here runs a service.
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const tools = join(root, 'node_modules', '.cache', 'bff-test-tools');
const say = (line: string) => process.stdout.write(`test setup: ${line}\n`);

function onPath(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

let updated = false;
function apt(args: string[]): void {
  if (!onPath('apt-get')) throw new Error(`apt-get is missing: install ${args.at(-1)} by hand`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if (!updated) {
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
    updated = true;
  }
  execFileSync('apt-get', args, { stdio: 'inherit', env });
}

if (!onPath('redis-server') || !onPath('redis-cli')) {
  say('installing redis-server from Debian');
  apt(['install', '-y', '-qq', 'redis-server']);
}

const chromium = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
if (!existsSync(chromium)) {
  say('installing chromium from Debian');
  apt(['install', '-y', '-qq', 'chromium']);
}

const promtool = join(tools, 'promtool');
if (!existsSync(promtool) && !onPath('promtool')) {
  say("extracting promtool from Debian's prometheus package");
  const work = mkdtempSync(join(tmpdir(), 'promtool-'));
  try {
    if (!updated && onPath('apt-get')) {
      execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
      updated = true;
    }
    execFileSync('apt-get', ['download', 'prometheus'], { cwd: work, stdio: 'inherit' });
    const deb = readdirSync(work).find((name) => name.endsWith('.deb'));
    if (!deb) throw new Error('apt-get download prometheus fetched nothing');
    execFileSync('dpkg-deb', ['-x', deb, 'extracted'], { cwd: work });
    mkdirSync(tools, { recursive: true });
    copyFileSync(join(work, 'extracted', 'usr', 'bin', 'promtool'), promtool);
    chmodSync(promtool, 0o755);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
// `npm run test:loaded` keeps both cores busy while the suite runs (test/setup/loaded-suite.ts).
if (process.argv.includes('--stress-ng') && !onPath('stress-ng')) {
  say('installing stress-ng from Debian');
  apt(['install', '-y', '-qq', 'stress-ng']);
}
say('redis-server, chromium and promtool are ready');

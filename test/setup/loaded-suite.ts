import { spawn, spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

/*
 * `npm run test:loaded`: the whole suite, three times in a row, while stress-ng keeps every
 * core busy (issue 19: a suite that never leans on the clock passes on a loaded machine). No
 * retry is turned on; the first failing run stops it with that run's exit code.
 */

const RUNS = Number(process.env['LOADED_RUNS'] ?? 3);
const cores = availableParallelism();
const hog = spawn('stress-ng', ['--cpu', String(cores), '--timeout', '0'], { stdio: 'ignore' });
const stopHog = () => hog.kill('SIGTERM');
process.on('exit', stopHog);

let code = 0;
for (let run = 1; run <= RUNS && code === 0; run += 1) {
  process.stdout.write(`test:loaded: run ${run} of ${RUNS}, stress-ng --cpu ${cores}\n`);
  const started = Date.now();
  code = spawnSync('npx', ['vitest', 'run'], { stdio: 'inherit' }).status ?? 1;
  process.stdout.write(
    `test:loaded: run ${run} ${code === 0 ? 'passed' : 'FAILED'} in ${Math.round((Date.now() - started) / 1000)} s\n`,
  );
}
stopHog();
process.exit(code);

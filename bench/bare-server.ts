import { join } from 'node:path';
import { freePort, repoRoot } from '../test/harness/chaos-processes.js';
import { startProcess, type BenchProcess } from './bench-process.js';

/** A reference row of bench/targets/bare-target.ts (R1–R4, R3e), started and listening. */
export interface BareServer {
  process: BenchProcess;
  origin: string;
  port: number;
}

/**
 * Starts bare-target.ts as `row`, sending the bytes of `bodyFile`; `dependency` is what the row
 * calls (a Redis URL, the search origin, or '') and `token` the search client token.
 */
export async function startBareServer(options: {
  row: string;
  bodyFile: string;
  dependency: string;
  token?: string;
  core: number;
  /** Raise its descriptor limit to this first (rows that hold many connections). */
  openFiles?: number;
}): Promise<BareServer> {
  const port = await freePort();
  const process = await startProcess(
    [
      '--import',
      'tsx',
      join(repoRoot(), 'bench/targets/bare-target.ts'),
      options.row,
      String(port),
      options.bodyFile,
      options.dependency,
      options.token ?? '',
    ],
    {
      core: options.core,
      label: options.row,
      ...(options.openFiles === undefined ? {} : { openFiles: options.openFiles }),
    },
  );
  return { process, origin: `http://127.0.0.1:${port}`, port };
}

/**
 * Starts the search route written by hand (targets/hand-written-search.ts), the peer of the
 * gateway's miss, on the same Redis and search simulator as the gateway rows.
 */
export async function startHandWrittenSearch(options: {
  redisUrl: string;
  searchOrigin: string;
  token: string;
  keyPrefix: string;
  cursorSecret: string;
  core: number;
}): Promise<BareServer> {
  const port = await freePort();
  const process = await startProcess(
    [
      '--import',
      'tsx',
      join(repoRoot(), 'bench/targets/hand-written-search.ts'),
      String(port),
      options.redisUrl,
      options.searchOrigin,
      options.token,
      options.keyPrefix,
      options.cursorSecret,
    ],
    { core: options.core, label: 'H' },
  );
  return { process, origin: `http://127.0.0.1:${port}`, port };
}

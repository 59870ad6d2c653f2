import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenApiDocument, type OpenApiOptions } from '../../src/openapi/openapi-document.js';

/*
 * /openapi.json passes the linters frontend and platform teams run, with their stock rules:
 * Redocly's `recommended` and Spectral's `spectral:oas`, no error and no warning, in every
 * document a gateway can serve. One warning is excused: `GET /api/search/url` is a redirect
 * (contract section 2), so its only success is a 3XX and Redocly's `operation-2xx-response`
 * warns; the test checks that it is that warning, there, and nothing else.
 */

const ROOT = new URL('../../', import.meta.url).pathname;
const bin = (name: string) => join(ROOT, 'node_modules', '.bin', name);

/** Both CLIs over every variant, on a loaded 2-core machine: seconds, with room to spare. */
const LINT_TIMEOUT_MS = 60_000;

/** The one problem allowed: the redirect route has no 2XX answer, by the contract. */
const EXCUSED = {
  ruleId: 'operation-2xx-response',
  severity: 'warn',
  pointer: '#/paths/~1api~1search~1url/get/responses',
};

/**
 * Every document openApiOptions can ask for: either mode; the operations routes on this
 * listener (no OPS_PORT) or not; /metrics there or not (METRICS); METRICS_TOKEN set or not.
 */
function variants(): Record<string, OpenApiOptions> {
  const all: Record<string, OpenApiOptions> = {};
  for (const sessionMode of [true, false]) {
    for (const [health, metrics] of [
      [true, true],
      [true, false],
      [false, false],
    ] as const) {
      for (const metricsToken of [true, false]) {
        const name = [
          sessionMode ? 'session' : 'service',
          health ? 'ops-here' : 'ops-port',
          metrics ? 'metrics' : 'no-metrics',
          metricsToken ? 'token' : 'no-token',
        ].join('-');
        all[`${name}.json`] = { maxK: 100, sessionMode, health, metrics, metricsToken };
      }
    }
  }
  return all;
}

/** A CLI's standard output, whatever its exit code: both exit non-zero when they find problems. */
function run(command: string, args: string[], cwd: string): Promise<string> {
  const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, env, maxBuffer: 64 << 20 }, (error, stdout, stderr) => {
      if (stdout.trim() === '')
        reject(new Error(`${command} printed nothing: ${stderr}`, { cause: error }));
      else resolve(stdout);
    });
  });
}

interface RedoclyProblem {
  ruleId: string;
  severity: string;
  message: string;
  location: { source: { ref: string }; pointer: string }[];
}

/** Spectral's json format: one result per problem, every severity (hints included). */
interface SpectralResult {
  code: string;
  severity: number;
  message: string;
  path: string[];
  source: string;
}

let dir: string;
let files: string[];
/** Redocly's problems by file name. */
const redocly = new Map<string, { ruleId: string; severity: string; pointer: string }[]>();
let spectral: SpectralResult[];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'openapi-lint-'));
  const documents = variants();
  files = Object.keys(documents);
  await Promise.all(
    files.map((file) =>
      writeFile(join(dir, file), JSON.stringify(createOpenApiDocument(documents[file]!), null, 2)),
    ),
  );
  // One run of each CLI over every file. Redocly reads no config here (the temporary
  // directory has none) and so applies its built-in `recommended` rules, as its `--extends`
  // says explicitly; Spectral gets the repository's ruleset, which is `spectral:oas` alone.
  const [redoclyOut, spectralOut] = await Promise.all([
    run(
      bin('redocly'),
      ['lint', '--format=json', '--extends=recommended', '--max-problems=1000', ...files],
      dir,
    ),
    run(
      bin('spectral'),
      ['lint', '-q', '-f', 'json', '-r', join(ROOT, '.spectral.yaml'), ...files],
      dir,
    ),
  ]);
  // Redocly prints one JSON report per file, in the order the files were given, each closed
  // by the only `}` at the start of a line, the next one following at once.
  const reports = redoclyOut
    .split(/(?<=^\})/m)
    .filter((text) => text.trim() !== '')
    .map((text) => JSON.parse(text) as { problems: RedoclyProblem[] });
  expect(reports).toHaveLength(files.length);
  reports.forEach((report, i) => {
    for (const problem of report.problems) {
      expect(basename(problem.location[0]!.source.ref)).toBe(files[i]);
    }
    redocly.set(
      files[i]!,
      report.problems.map(({ ruleId, severity, location }) => ({
        ruleId,
        severity,
        pointer: location[0]!.pointer,
      })),
    );
  });
  spectral = JSON.parse(spectralOut) as SpectralResult[];
}, LINT_TIMEOUT_MS);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('/openapi.json under the linters other teams run', () => {
  it("when every variant is linted with Redocly's recommended rules, then the only problem is the excused warning on GET /api/search/url", () => {
    expect(files.length).toBe(12);
    for (const file of files) {
      expect({ file, problems: redocly.get(file) }).toEqual({ file, problems: [EXCUSED] });
    }
  });

  it('when every variant is linted with spectral:oas, then nothing is reported, at any severity', () => {
    const found = spectral.map((r) => ({
      file: basename(r.source),
      rule: r.code,
      at: r.path.join('.'),
      message: r.message,
    }));
    expect(found).toEqual([]);
  });

  it("when the excused warning is looked at, then that route's only success is the redirect", async () => {
    const document = JSON.parse(await readFile(join(dir, files[0]!), 'utf8')) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    const statuses = Object.keys(document.paths['/api/search/url']!['get']!.responses);
    expect(statuses).toContain('3XX');
    expect(statuses.filter((status) => status.startsWith('2'))).toEqual([]);
  });

  it('when the Spectral ruleset is read, then it is spectral:oas with nothing switched off', async () => {
    const ruleset = parse(await readFile(join(ROOT, '.spectral.yaml'), 'utf8')) as unknown;
    expect(ruleset).toEqual({ extends: ['spectral:oas'] });
  });
});

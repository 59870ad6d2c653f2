import { ATTACKS, runAbuse, type AbuseResult } from '../test/harness/abuse-scenarios.js';
import { formatStatuses } from '../test/harness/chaos-contract.js';
import { createChaosEnvironment } from '../test/harness/chaos-environment.js';
import { CHAOS_SCALE, type Scale } from '../test/harness/chaos-scenario-runner.js';
import { LOAD_SCENARIOS } from '../test/harness/chaos-scenarios.js';
import {
  EXIT_MARGIN_MS,
  forcedStop,
  gracefulStop,
  type StopResult,
} from '../test/harness/chaos-stop.js';

/*
 * `npm run chaos`: the fault-injection scenarios of test/fault-injection at a larger scale
 * against the production build, on loopback only, bounded in time and requests. Prints one
 * Markdown row per scenario, then every contract breach it saw. Exit code 1 when there was one.
 */

const scale: Scale = {
  ...CHAOS_SCALE,
  workers: Number(process.env['CHAOS_WORKERS'] ?? CHAOS_SCALE.workers),
  durationMs: Number(process.env['CHAOS_SECONDS'] ?? CHAOS_SCALE.durationMs / 1000) * 1000,
};
const IN_FLIGHT = 32;

interface Row {
  scenario: string;
  requests: number;
  statuses: string;
  stale: number;
  upstreamCalls: number;
  p99: number;
  findings: string[];
}

async function main(): Promise<void> {
  const started = Date.now();
  const env = await createChaosEnvironment();
  const rows: Row[] = [];
  const abuse: AbuseResult[] = [];
  try {
    for (const scenario of LOAD_SCENARIOS) {
      const result = await scenario(env, scale);
      const findings = [...result.summary.violations];
      const recovered = result.recovery.at(-1);
      if (recovered?.status !== 200)
        findings.push(
          `no recovery: last fresh request got ${recovered?.status ?? recovered?.error}`,
        );
      const zero = result.answers.filter((a) => a.status === 503 && a.retryAfter === '0').length;
      if (zero > 0) findings.push(`${zero}× 503 with Retry-After: 0 (circuit half-open)`);
      if (result.upstreamCalls > result.callBudget)
        findings.push(`${result.upstreamCalls} upstream calls, budget ${result.callBudget}`);
      if (result.warm.upstreamCalls !== result.warm.references.size)
        findings.push(
          `warm-up: ${result.warm.upstreamCalls} upstream calls for ${result.warm.references.size} keys`,
        );
      if (result.name.startsWith('Redis') && (result.facts['keysAfterRestart'] ?? 0) === 0)
        findings.push('no cache entry written to Redis after its restart');
      rows.push({
        scenario: result.name,
        requests: result.summary.requests,
        statuses: formatStatuses(result.summary.byStatus),
        stale: result.summary.stale,
        upstreamCalls: result.upstreamCalls,
        p99: result.summary.p99Ms,
        findings,
      });
    }
    for (const run of [gracefulStop, forcedStop]) {
      const result = await run(env, IN_FLIGHT);
      rows.push({
        scenario: `${result.name} (exit ${result.exit?.code ?? 'none'} after ${Math.round(result.msToExit)} ms)`,
        requests: result.summary.requests,
        statuses: formatStatuses(result.summary.byStatus),
        stale: result.summary.stale,
        upstreamCalls: result.upstreamCalls,
        p99: result.summary.p99Ms,
        findings: stopFindings(result, run === gracefulStop ? 0 : 1),
      });
    }
    for (const attack of ATTACKS) abuse.push(await runAbuse(env, attack, scale.durationMs));
  } finally {
    await env.close();
  }
  print(rows, Date.now() - started);
  const breaches = printAbuse(abuse);
  if (rows.some((row) => row.findings.length > 0) || breaches > 0) process.exitCode = 1;
}

/** Hostile clients: what the well-behaved clients got, and what the gateway held. */
function printAbuse(results: AbuseResult[]): number {
  const header = [
    'attack',
    'what it sent',
    'well-behaved requests',
    'answered by status',
    'peak RSS MB',
    'peak descriptors',
  ];
  const table = [
    header,
    ...results.map((r) => [
      r.name,
      r.attack,
      String(r.summary.requests),
      formatStatuses(r.summary.byStatus),
      r.peakRssMb.toFixed(0),
      String(r.peakDescriptors),
    ]),
  ];
  const widths = header.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  const line = (row: string[]) =>
    `| ${row.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
  const findings = results.flatMap((r) => [
    ...r.summary.violations.map((v) => `- ${r.name}: ${v}`),
    ...(r.summary.byStatus['200'] === r.summary.requests
      ? []
      : [
          `- ${r.name}: not every well-behaved request got 200 (${formatStatuses(r.summary.byStatus)})`,
        ]),
  ]);
  process.stdout.write(
    [
      `hostile clients (MAX_CONNECTIONS ${results[0]?.maxConnections ?? '?'}, ${scale.durationMs / 1000} s each, 8 well-behaved clients searching throughout):`,
      '',
      line(header),
      line(widths.map((w) => '-'.repeat(w))),
      ...table.slice(1).map(line),
      '',
      findings.length === 0 ? 'Nothing lost.' : `Lost:\n${findings.join('\n')}`,
      '',
    ].join('\n'),
  );
  return findings.length;
}

function stopFindings(result: StopResult, wanted: 0 | 1): string[] {
  const findings =
    wanted === 0
      ? [...result.summary.violations]
      : result.answers
          .filter((a) => a.status !== undefined)
          .map((a) => `answered ${a.status} after the cut`);
  const { shutdownTimeoutMs } = result.options;
  if (result.exit === undefined) {
    findings.push(`no exit ${Math.round(result.msToExit)} ms after SIGTERM; SIGKILLed`);
  } else if (result.exit.code !== wanted) {
    findings.push(`exit code ${result.exit.code}, expected ${wanted}`);
  }
  const limit = wanted === 0 ? shutdownTimeoutMs : shutdownTimeoutMs + EXIT_MARGIN_MS;
  if (result.exit !== undefined && result.msToExit >= limit)
    findings.push(
      `exited ${Math.round(result.msToExit)} ms after SIGTERM; SHUTDOWN_TIMEOUT_MS is ${shutdownTimeoutMs}`,
    );
  return findings;
}

function print(rows: Row[], ms: number): void {
  const table = [
    ['scenario', 'requests', 'answered by status', 'stale served', 'upstream calls', 'p99 ms'],
    ...rows.map((r) => [
      r.scenario,
      String(r.requests),
      r.statuses,
      String(r.stale),
      String(r.upstreamCalls),
      r.p99.toFixed(0),
    ]),
  ];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  const line = (row: string[]) =>
    `| ${row.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
  const findings = rows.flatMap((r) => r.findings.map((f) => `- ${r.scenario}: ${f}`));
  process.stdout.write(
    [
      `chaos: ${scale.workers} workers, ${scale.durationMs / 1000} s per load scenario, ${IN_FLIGHT} requests in flight at SIGTERM, Node ${process.version}, ${(ms / 1000).toFixed(0)} s in all`,
      '',
      line(table[0]!),
      line(widths.map((w) => '-'.repeat(w))),
      ...table.slice(1).map(line),
      '',
      findings.length === 0
        ? 'No contract breaches.'
        : `Contract breaches:\n${findings.join('\n')}`,
      '',
    ].join('\n'),
  );
}

await main();

import type { Answer, Judge, Received } from './chaos-load.js';

/*
 * What every answer of the search route must be under upstream trouble (GATEWAY-CONTRACT.md
 * sections 3 and 4): a complete, correct ResultList, or the problem+json envelope with the code
 * that matches its status. Anything else (a half body, a 500, a wrong status, no answer) is a
 * violation, named precisely enough to debug from the test output.
 */

export type ErrorStatus = 502 | 503 | 504;
/** The error statuses a scenario's fault may cause, each with the codes allowed for it. */
export type AllowedErrors = Partial<Record<ErrorStatus, readonly string[]>>;

export const TIMEOUT_ERRORS: AllowedErrors = { 504: ['UPSTREAM_TIMEOUT'] };
export const BREAKER_OPEN: AllowedErrors = { 503: ['SERVICE_UNAVAILABLE'] };

export interface SearchExpectations {
  /** The product names the page of a path must hold (in order for sort=relevance). */
  expectedNames(q: string, k: number): readonly string[];
  /** `itemListElement` of a healthy answer per path, as JSON, for byte-exact comparison. */
  references: ReadonlyMap<string, string>;
  allowedErrors: AllowedErrors;
}

interface Problem {
  status?: unknown;
  code?: unknown;
  source?: unknown;
  requestId?: unknown;
}

export function judgeSearch(expect: SearchExpectations): Judge {
  return (path, received) =>
    received.status === 200
      ? judgeSuccess(path, received, expect)
      : judgeProblem(received, expect.allowedErrors);
}

function judgeSuccess(path: string, received: Received, expect: SearchExpectations) {
  const cache = received.headers['x-cache'];
  if (cache !== 'HIT' && cache !== 'MISS' && cache !== 'STALE') return `200 with X-Cache ${cache}`;
  if (!received.headers['content-type']?.startsWith('application/json'))
    return `200 with Content-Type ${received.headers['content-type']}`;
  let list: { itemListElement?: unknown; itemScore?: unknown };
  try {
    list = JSON.parse(received.body) as typeof list;
  } catch {
    return `200 ${cache} whose body is not JSON (${received.body.length} bytes)`;
  }
  const items = list.itemListElement;
  if (!Array.isArray(items)) return `200 ${cache} without itemListElement`;
  if (!Array.isArray(list.itemScore) || list.itemScore.length !== items.length)
    return `200 ${cache} with itemScore not matching itemListElement`;
  const reference = expect.references.get(path);
  if (reference !== undefined && JSON.stringify(items) !== reference)
    return `200 ${cache} differing from the healthy answer of ${path}`;
  const query = new URLSearchParams(path.split('?')[1]);
  const q = query.get('q') ?? '';
  const want = expect.expectedNames(q, Number(query.get('k') ?? 10));
  const got = items.map((item) => (item as { name?: unknown }).name);
  const ordered = (query.get('sort') ?? 'relevance') === 'relevance';
  const same = ordered
    ? JSON.stringify(got) === JSON.stringify(want)
    : JSON.stringify([...got].sort()) === JSON.stringify([...want].sort());
  return same ? undefined : `200 ${cache} with the wrong products for ${path}`;
}

function judgeProblem(received: Received, allowed: AllowedErrors): string | undefined {
  const { status } = received;
  const codes = allowed[status as ErrorStatus];
  if (codes === undefined) return `unexpected HTTP ${status}`;
  if (!received.headers['content-type']?.startsWith('application/problem+json'))
    return `${status} with Content-Type ${received.headers['content-type']}`;
  let problem: Problem;
  try {
    problem = JSON.parse(received.body) as Problem;
  } catch {
    return `${status} whose envelope is not JSON`;
  }
  if (problem.status !== status)
    return `${status} whose envelope says status ${String(problem.status)}`;
  if (typeof problem.code !== 'string' || !codes.includes(problem.code))
    return `${status} with code ${String(problem.code)}`;
  if (problem.source !== 'search') return `${status} with source ${String(problem.source)}`;
  if (problem.requestId !== received.headers['x-request-id'])
    return `${status} whose requestId is not its X-Request-Id`;
  // Whether 0 is acceptable is a separate, deterministic test (the half-open circuit).
  if (status === 503 && !/^\d+$/.test(received.headers['retry-after'] ?? ''))
    return `503 with Retry-After ${received.headers['retry-after']}`;
  return undefined;
}

export interface LoadSummary {
  requests: number;
  /** Answers per status; `error` counts requests that got none. */
  byStatus: Record<string, number>;
  hits: number;
  stale: number;
  clientErrors: number;
  p99Ms: number;
  violationCount: number;
  /** Distinct violations with how often each occurred, most frequent first. */
  violations: string[];
}

export function summarize(answers: readonly Answer[]): LoadSummary {
  const byStatus: Record<string, number> = {};
  const violations = new Map<string, number>();
  for (const answer of answers) {
    const key = answer.status === undefined ? 'error' : String(answer.status);
    byStatus[key] = (byStatus[key] ?? 0) + 1;
    if (answer.violation !== undefined)
      violations.set(answer.violation, (violations.get(answer.violation) ?? 0) + 1);
  }
  const latencies = answers.map((a) => a.ms).sort((a, b) => a - b);
  const p99 = latencies[Math.min(latencies.length - 1, Math.ceil(latencies.length * 0.99) - 1)];
  return {
    requests: answers.length,
    byStatus,
    hits: answers.filter((a) => a.status === 200 && a.cache === 'HIT').length,
    stale: answers.filter((a) => a.status === 200 && a.cache === 'STALE').length,
    clientErrors: byStatus['error'] ?? 0,
    p99Ms: p99 ?? 0,
    violationCount: [...violations.values()].reduce((a, b) => a + b, 0),
    violations: [...violations]
      .sort((a, b) => b[1] - a[1])
      .map(([text, count]) => `${count}× ${text}`),
  };
}

/** `200:950 502:30 503:20` */
export function formatStatuses(byStatus: Record<string, number>): string {
  return Object.entries(byStatus)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([status, count]) => `${status}:${count}`)
    .join(' ');
}

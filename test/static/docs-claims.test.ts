import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { cacheVariableSchemas } from '../../config/cache-variables.js';
import { ENV_VARIABLES } from '../../config/env-schema.js';
import { AppError, ERROR_CODES, ERROR_SOURCES } from '../../src/errors/app-error.js';
import { statusOf } from '../../src/errors/to-problem.js';
import { upstreamOutcome } from '../../src/errors/upstream-failure.js';
import { STREAM_CLOSE_REASONS } from '../../src/features/events/stream-counts.js';
import { ROUTE_TABLE } from '../../src/features/route-table.js';
import { CHAT_EVENTS_STATES } from '../../src/observability/chat-events-status.js';
import { CHAT_OPERATIONS } from '../../src/upstreams/chat/chat-errors.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { GATEWAY_ENVIRONMENT } from '../../config/runtime.js';

/*
 * What the README and the pages of docs/ name, checked against what the code makes: the routes
 * (`METHOD /path`), the metric families and the label values they list, the variables, the error
 * table and the repository paths. docs-routes.test.ts holds the other direction for routes (every
 * route of the table is documented) and env-docs.test.ts the configuration table; this file
 * catches a claim the code no longer makes, anywhere in the prose. docs/log/ is left out: it is a
 * dated record of past states, not a description of the code.
 */

const ROOT = new URL('../../', import.meta.url).pathname;
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** A path template (`/users/{email}`) as a pattern its concrete paths match. */
const templatePattern = (template: string) =>
  new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`);

/** Paths the docs may name that are no route of the gateway, each for a stated reason. */
const OUTSIDE_PATHS: readonly { prefix: string; why: string }[] = [
  { prefix: '/api/v1/', why: "the chat server's API, `{CHAT_BASE_URL}/api/v1/...`" },
  { prefix: '/v1/', why: "the search service's API, `{SEARCH_BASE_URL}/v1/...`" },
  { prefix: '/__sim/', why: "the chat simulator's control interface" },
];
/** `/` and the other non-API paths: the static site (STATIC_DIR, the demo), not a table route. */
const STATIC_SITE = '/';

/**
 * The chat server's paths as its OpenAPI document writes them, relative to its `/api/v1` (the
 * simulators' page names them so): `/fetch_api_key`, `/users/me`, `/users/{user_id}/status`, ….
 */
const ZULIP_PATHS = Object.keys(
  (parse(read('test/fixtures/zulip-openapi.yaml')) as { paths: Record<string, unknown> }).paths,
).map(templatePattern);

/** The text outside fenced code blocks. */
function withoutFences(markdown: string): string {
  let fenced = false;
  return markdown
    .split('\n')
    .filter((line) => {
      if (/^\s*```/.test(line)) fenced = !fenced;
      return !fenced && !/^\s*```/.test(line);
    })
    .join('\n');
}

/** The text of the `## heading` section, up to the next `## ` heading. */
function sectionOf(page: string, heading: string): string {
  const start = page.search(new RegExp(`^## ${heading}$`, 'm'));
  if (start === -1) return '';
  const end = page.slice(start + 1).search(/^## /m);
  return page.slice(start, end === -1 ? undefined : start + 1 + end);
}

/** Every inline code span's text. */
const codeSpans = (markdown: string) =>
  [...withoutFences(markdown).matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!);

// ---------------------------------------------------------------------------------------------
// Routes

/** `METHOD /path` claims that name no route of the table (HEAD and OPTIONS: any route's path). */
function unknownRoutes(text: string): string[] {
  const routes = ROUTE_TABLE.map((route) => ({
    method: route.method.toUpperCase(),
    path: route.path,
    pattern: templatePattern(route.path),
  }));
  const claims = [
    ...text.matchAll(/\b(GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS) (\/[^\s`'"),;]*)/g),
  ].map((m) => ({ method: m[1]!, path: m[2]!.split(/[?#…]/)[0]!.replace(/[.:]$/, '') || '/' }));
  return claims
    .filter(({ method, path }) => {
      if (path === STATIC_SITE || OUTSIDE_PATHS.some((o) => path.startsWith(o.prefix))) {
        return false;
      }
      if (ZULIP_PATHS.some((zulip) => zulip.test(path))) return false;
      const anyMethod = method === 'HEAD' || method === 'OPTIONS';
      return !routes.some(
        (route) =>
          (anyMethod || route.method === method) &&
          (route.path === path || route.pattern.test(path)),
      );
    })
    .map(({ method, path }) => `${method} ${path}`);
}

// ---------------------------------------------------------------------------------------------
// Metrics

/** The Metrics table of docs/operations.md: each family's type and label value lists. */
function documentedMetrics(
  page: string,
): Map<string, { type: string; labels: Map<string, string[]> }> {
  const section = sectionOf(page, 'Metrics');
  const families = new Map<string, { type: string; labels: Map<string, string[]> }>();
  for (const [, name, type, cell] of section.matchAll(
    /^\| `([a-z_]+)` +\| ([a-z]*) *\| (.*)\|$/gm,
  )) {
    families.set(name!, { type: type!, labels: labelLists(cell!) });
  }
  return families;
}

/**
 * "`label`: `a`, `b` (a note), `c`; `other`: …": each label's values, notes in brackets left
 * out (they may name variables or other labels' values).
 */
function labelLists(cell: string): Map<string, string[]> {
  let plain = cell;
  for (let before = ''; before !== plain;) {
    before = plain;
    plain = plain.replace(/\([^()]*\)/g, '');
  }
  const lists = new Map<string, string[]>();
  const parts = plain.split(/`([a-z_]+)`:/);
  for (let i = 1; i + 1 < parts.length; i += 2) {
    const values = [...parts[i + 1]!.matchAll(/`([a-z_][a-z0-9_-]*)`/g)].map((m) => m[1]!);
    lists.set(parts[i]!, values);
  }
  return lists;
}

/** The families a metrics registry renders, by name, with their Prometheus type. */
async function renderedFamilies(): Promise<Map<string, string>> {
  const text = await createMetrics({ enabled: true }).render();
  return new Map(
    [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!] as [string, string]),
  );
}

/** Every operation an upstream call is recorded under: chat's union and the literals in src/. */
function upstreamOperations(): string[] {
  const fromChat = [...CHAT_OPERATIONS];
  const literals = sources('src').flatMap((file) =>
    [...read(file).matchAll(/\boperation: '([a-z-]+)'/g)].map((m) => m[1]!),
  );
  return [...new Set([...fromChat, ...literals])];
}

/** The outcome label of every way an upstream call can end. */
function upstreamOutcomes(): string[] {
  const outcomes = ERROR_CODES.flatMap((code) =>
    ERROR_SOURCES.map((source) => upstreamOutcome(new AppError(code, '', { source }))),
  );
  return [...new Set(['success', ...outcomes])];
}

/** The cache resources the route table declares: the `resource` label's values. */
const cacheResources = () => [
  ...new Set(ROUTE_TABLE.flatMap((route) => (route.cache ? [route.cache.resource] : []))),
];

/** The label value lists the code makes, by family and label. */
const LABEL_VALUES: readonly { family: string; label: string; values: () => string[] }[] = [
  { family: 'gateway_cache_requests_total', label: 'resource', values: cacheResources },
  {
    family: 'gateway_upstream_request_duration_seconds',
    label: 'upstream',
    values: () => ERROR_SOURCES.filter((source) => source !== 'gateway'),
  },
  {
    family: 'gateway_upstream_request_duration_seconds',
    label: 'operation',
    values: upstreamOperations,
  },
  {
    family: 'gateway_upstream_request_duration_seconds',
    label: 'outcome',
    values: upstreamOutcomes,
  },
  {
    family: 'gateway_event_streams_closed_total',
    label: 'reason',
    values: () => [...STREAM_CLOSE_REASONS],
  },
  {
    family: 'gateway_chat_events_queue_state',
    label: 'state',
    values: () => [...CHAT_EVENTS_STATES],
  },
];

// ---------------------------------------------------------------------------------------------
// Variables

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name).slice(ROOT.length));
}

/** Every name a variable claim may use, and why it is one. */
function knownVariables(): Set<string> {
  // The variables each cached route brings (a per-user one has no error window).
  const cached = Object.keys(cacheVariableSchemas(ROUTE_TABLE));
  // What the benchmarks and the test harness read from their environment (BENCH_ROWS, …).
  const tooling = ['bench', 'test/setup', 'test/harness', 'test/helpers'].flatMap((dir) =>
    sources(dir).flatMap((file) =>
      [...read(file).matchAll(/env\[['"]([A-Z][A-Z0-9_]*)['"]\]|env\.([A-Z][A-Z0-9_]*)/g)].map(
        (m) => (m[1] ?? m[2])!,
      ),
    ),
  );
  // The chat server's own codes (BAD_EVENT_QUEUE_ID, …), as its OpenAPI document spells them.
  const zulip = [...read('test/fixtures/zulip-openapi.yaml').matchAll(/\b[A-Z][A-Z0-9_]+\b/g)].map(
    (m) => m[0],
  );
  // The process environment the gateway starts with (config/runtime.ts: MALLOC_ARENA_MAX).
  const runtime = Object.keys(GATEWAY_ENVIRONMENT);
  return new Set([...ENV_VARIABLES, ...cached, ...ERROR_CODES, ...tooling, ...zulip, ...runtime]);
}

/** Standard variables read by what the gateway runs on, not by the gateway's schema. */
const STANDARD_PREFIXES = ['OTEL_', 'NODE_'];

/** Names that look like variables (`SCREAMING_SNAKE`, or a prefix `NAME_*`) that nothing knows. */
function unknownVariables(text: string, known: ReadonlySet<string>): string[] {
  const names = codeSpans(text).flatMap((span) => [
    ...[...span.matchAll(/\b([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\b(?!_\*)/g)].map((m) => ({
      name: m[1]!,
      prefix: false,
    })),
    ...[...span.matchAll(/\b([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)_\*/g)].map((m) => ({
      name: m[1]!,
      prefix: true,
    })),
  ]);
  return names
    .filter(({ name, prefix }) => {
      if (STANDARD_PREFIXES.some((standard) => name.startsWith(standard))) return false;
      if (prefix) return ![...known].some((k) => k.startsWith(`${name}_`));
      return !known.has(name);
    })
    .map(({ name, prefix }) => (prefix ? `${name}_*` : name));
}

// ---------------------------------------------------------------------------------------------
// The error table of docs/frontend.md

/** Each row's statuses and codes. */
function errorTable(page: string): { statuses: number[]; codes: string[] }[] {
  return [...sectionOf(page, 'Errors').matchAll(/^\| ([0-9 /]+?) +\| ([^|]+)\|/gm)].map((m) => ({
    statuses: m[1]!.split('/').map((s) => Number(s.trim())),
    codes: [...m[2]!.matchAll(/`([A-Z_]+)`/g)].map((c) => c[1]!),
  }));
}

// ---------------------------------------------------------------------------------------------
// Repository paths

const REPO_PATH = /^(?:src|config|test|bench|simulators)\/[^\s*{}…<>]+$/;

const missingPaths = (text: string) =>
  codeSpans(text)
    .filter((span) => REPO_PATH.test(span))
    .filter((path) => !existsSync(join(ROOT, path.replace(/\/$/, ''))));

// ---------------------------------------------------------------------------------------------

describe('what the docs claim, against the code', () => {
  for (const page of PAGES) {
    it(`when ${page} names a route (METHOD /path), then the route table has it`, () => {
      expect(unknownRoutes(read(page))).toEqual([]);
    });

    it(`when ${page} names a variable, then the schema, a cached route, the tooling or a standard defines it`, () => {
      expect(unknownVariables(read(page), knownVariables())).toEqual([]);
    });

    it(`when ${page} names a file of the repository, then it exists`, () => {
      expect(missingPaths(read(page))).toEqual([]);
    });
  }

  it('when the metrics table of docs/operations.md is read, then its gateway families are exactly the ones the registry renders, with their types', async () => {
    const documented = documentedMetrics(read('docs/operations.md'));
    const rendered = await renderedFamilies();
    const ours = (names: Iterable<string>) =>
      [...names].filter((name) => /^(gateway|http_server)_/.test(name)).sort();
    expect(ours(documented.keys())).toEqual(ours(rendered.keys()));
    const types = ours(documented.keys()).map((name) => [name, documented.get(name)!.type]);
    expect(types).toEqual(ours(documented.keys()).map((name) => [name, rendered.get(name)]));
  });

  for (const { family, label, values } of LABEL_VALUES) {
    it(`when the metrics table lists ${family}'s ${label} values, then they are exactly what the code produces`, () => {
      const listed = documentedMetrics(read('docs/operations.md')).get(family)?.labels.get(label);
      expect(listed, `docs/operations.md lists the values of ${family}{${label}}`).toBeDefined();
      expect([...new Set(listed)].sort()).toEqual(values().sort());
    });
  }

  it("when the error table of docs/frontend.md is read, then it names every error code, each in its status's row", () => {
    const rows = errorTable(read('docs/frontend.md'));
    const misplaced = rows.flatMap(({ statuses, codes }) =>
      codes
        .filter((code) => (ERROR_CODES as readonly string[]).includes(code))
        .filter((code) => !statuses.includes(statusOf(code as (typeof ERROR_CODES)[number])))
        .map((code) => `${code} is ${statusOf(code as (typeof ERROR_CODES)[number])}`),
    );
    const named = new Set(rows.flatMap((row) => row.codes));
    const unknown = [...named].filter((code) => !(ERROR_CODES as readonly string[]).includes(code));
    expect({ misplaced, unknown }).toEqual({ misplaced: [], unknown: [] });
    expect(ERROR_CODES.filter((code) => !named.has(code))).toEqual([]);
  });
});

describe('the checks catch a stale claim', () => {
  it('when a page names a route the table does not have, then it is reported; outside paths are not', () => {
    const text =
      '`GET /api/chat/topics`, `POST /api/search`, `HEAD /api/events`, `GET /api/chat/users/ada@acme.test`, `POST /api/v1/register`, `GET /`';
    expect(unknownRoutes(text)).toEqual(['GET /api/chat/topics', 'POST /api/search']);
  });

  it('when a page names a variable nothing defines, then it is reported; known ones and prefixes of known ones are not', () => {
    const known = new Set(['SEARCH_CACHE_TTL_SECONDS', 'PORT_NUMBER']);
    const text =
      'Set `SEARCH_CACHE_TTL_SECONDS=5`, `SEARCH_CACHE_*`, `OTEL_TRACES_SAMPLER`, `SEARCH_CACHE_MAX` and `FOLDERS_*`.';
    expect(unknownVariables(text, known)).toEqual(['SEARCH_CACHE_MAX', 'FOLDERS_*']);
  });

  it('when the metrics table lists a resource the route table has no cache for, then the lists differ', () => {
    const page = [
      '## Metrics',
      '',
      '| `gateway_cache_requests_total` | counter | `resource`: `search`, `topics` (soon); `result`: `hit` |',
      '',
      '## Next',
    ].join('\n');
    const listed = documentedMetrics(page).get('gateway_cache_requests_total')!;
    expect(listed.type).toBe('counter');
    expect(listed.labels.get('resource')).toEqual(['search', 'topics']);
    expect(listed.labels.get('resource')!.sort()).not.toEqual(cacheResources().sort());
  });

  it('when a page names a file that is gone, then it is reported', () => {
    expect(missingPaths('`src/http/edge.ts` and `src/gateway-parts.ts`')).toEqual([
      'src/gateway-parts.ts',
    ]);
  });

  it('when the error table puts a code in the wrong row, then it is found', () => {
    const rows = errorTable('## Errors\n\n| 502 | `SERVICE_UNAVAILABLE` | x |\n');
    expect(rows).toEqual([{ statuses: [502], codes: ['SERVICE_UNAVAILABLE'] }]);
    expect(statusOf('SERVICE_UNAVAILABLE')).not.toBe(502);
  });
});

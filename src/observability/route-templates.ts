/**
 * The route template a request path matches, as metric labels and span names give it
 * (contract section 6: `{name}` placeholders, `unmatched` when none). Never the raw path: no
 * email, id, emoji name or query ever becomes a label.
 */
export type RouteTemplates = (url: string) => string;

/** Paths outside /api answered by a served frontend (STATIC_DIR). */
export const STATIC_ROUTE = '/{path}';
export const UNMATCHED = 'unmatched';

/**
 * Matches request targets against `templates` (the route table's paths, e.g.
 * `/api/chat/users/{email}`) the way Express routes them: case-insensitive, one trailing slash
 * allowed. `site` says whether a frontend is served for other paths.
 */
export function createRouteTemplates(templates: readonly string[], site: boolean): RouteTemplates {
  const exact = new Set(templates.filter((t) => !t.includes('{')));
  const patterns = templates
    .filter((t) => t.includes('{'))
    .map((t): [RegExp, string] => [new RegExp(`^${t.replace(/\{[^}]+\}/g, '[^/]+')}$`), t]);
  return (url) => {
    const raw = withoutQuery(url);
    // The common case, a route as written, costs one lookup.
    if (exact.has(raw)) return raw;
    const path = normalisedPath(raw);
    if (exact.has(path)) return path;
    for (const [pattern, template] of patterns) if (pattern.test(path)) return template;
    return site && !isApiPath(path) ? STATIC_ROUTE : UNMATCHED;
  };
}

function withoutQuery(url: string): string {
  const question = url.indexOf('?');
  return question < 0 ? url : url.slice(0, question);
}

/** The path as Express matches it: lower case, one trailing slash dropped. */
function normalisedPath(raw: string): string {
  const path = raw.toLowerCase();
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

function isApiPath(path: string): boolean {
  return path.startsWith('/api/') || path === '/api';
}

/**
 * The route template a request path matches, as metric labels and span names give it
 * (contract section 6: `{name}` placeholders, `unmatched` when none). Never the raw path: no
 * email, id, emoji name or query ever becomes a label.
 */
const EXACT = new Set([
  '/api/search',
  '/api/search/url',
  '/api/chat/drafts',
  '/api/chat/channel-folders',
  '/api/auth/login',
  '/api/auth/logout',
  '/api/auth/session',
  '/api/bootstrap',
  '/metrics',
  '/openapi.json',
  '/docs',
  '/healthz',
  '/readyz',
]);

const PATTERNS: readonly [RegExp, string][] = [
  [/^\/api\/chat\/users\/[^/]+\/status$/, '/api/chat/users/{user_id}/status'],
  [/^\/api\/chat\/users\/[^/]+$/, '/api/chat/users/{email}'],
  [/^\/api\/chat\/emoji\/[^/]+$/, '/api/chat/emoji/{emoji_name}'],
  [/^\/docs\/[^/]+$/, '/docs/{asset}'],
];

/** Paths outside /api answered by a served frontend (STATIC_DIR). */
export const STATIC_ROUTE = '/{path}';
export const UNMATCHED = 'unmatched';

/**
 * The template of `url` (path and query), matched the way Express routes it: case-insensitive,
 * one trailing slash allowed. `site` says whether a frontend is served for other paths.
 */
export function routeTemplate(url: string, site: boolean): string {
  const question = url.indexOf('?');
  const raw = question < 0 ? url : url.slice(0, question);
  // The common case, a route as written, costs one lookup.
  if (EXACT.has(raw)) return raw;
  let path = raw.toLowerCase();
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  if (EXACT.has(path)) return path;
  for (const [pattern, template] of PATTERNS) if (pattern.test(path)) return template;
  return site && !path.startsWith('/api/') && path !== '/api' ? STATIC_ROUTE : UNMATCHED;
}

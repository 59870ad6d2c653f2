import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { APP_ORIGIN } from '../helpers/test-gateway.js';
import { expectProblem, useUpstreams, type Upstreams } from './hostile-helpers.js';

/*
 * Cross-site request forgery against every unsafe route (docs/frontend.md, "Cross-site
 * protection"): an unsafe request needs `X-CSRF: 1` and either an allowed Origin or
 * `Sec-Fetch-Site: same-origin`; anything else is 403 CSRF_REJECTED before body parsing, routing
 * or any upstream call.
 */

const upstreams = useUpstreams();

interface UnsafeRoute {
  name: string;
  method: 'post' | 'delete';
  path: string;
  mode: 'service' | 'session';
  body?: (u: Upstreams) => string;
  /** What the request gets once it is past the guard. */
  passes: number;
}

const ROUTES: UnsafeRoute[] = [
  {
    name: 'the status update',
    method: 'post',
    path: '/api/chat/users/4/status',
    mode: 'service',
    body: () => '{"status_text":"forged"}',
    passes: 204,
  },
  {
    name: 'the emoji deletion',
    method: 'delete',
    path: '/api/chat/emoji/no_such_emoji',
    mode: 'service',
    passes: 404,
  },
  {
    name: 'the login',
    method: 'post',
    path: '/api/auth/login',
    mode: 'session',
    body: (u) => {
      const { email, password } = u.chat.credentials('member');
      return JSON.stringify({ email, password });
    },
    passes: 200,
  },
  {
    name: 'the logout',
    method: 'post',
    path: '/api/auth/logout',
    mode: 'session',
    body: () => '{}',
    passes: 204,
  },
];

const FORGERIES: [string, Record<string, string>][] = [
  ['no X-CSRF', { Origin: APP_ORIGIN }],
  ['X-CSRF: 0', { Origin: APP_ORIGIN, 'X-CSRF': '0' }],
  ['X-CSRF: true', { Origin: APP_ORIGIN, 'X-CSRF': 'true' }],
  ['an empty X-CSRF', { Origin: APP_ORIGIN, 'X-CSRF': '' }],
  ['X-CSRF given twice', { Origin: APP_ORIGIN, 'X-CSRF': '1, 1' }],
  ['a disallowed Origin', { Origin: 'https://evil.test', 'X-CSRF': '1' }],
  ['Origin: null', { Origin: 'null', 'X-CSRF': '1' }],
  ['no Origin at all', { 'X-CSRF': '1' }],
  ['a look-alike Origin', { Origin: `${APP_ORIGIN}.evil.test`, 'X-CSRF': '1' }],
  ['the allowed Origin with a path', { Origin: `${APP_ORIGIN}/`, 'X-CSRF': '1' }],
  ['two Origins joined', { Origin: `https://evil.test, ${APP_ORIGIN}`, 'X-CSRF': '1' }],
  ['Sec-Fetch-Site: cross-site and no Origin', { 'Sec-Fetch-Site': 'cross-site', 'X-CSRF': '1' }],
  [
    'Sec-Fetch-Site: cross-site from a disallowed Origin',
    { 'Sec-Fetch-Site': 'cross-site', Origin: 'https://evil.test', 'X-CSRF': '1' },
  ],
  ['Sec-Fetch-Site: same-site and no Origin', { 'Sec-Fetch-Site': 'same-site', 'X-CSRF': '1' }],
  ['Sec-Fetch-Site: none and no Origin', { 'Sec-Fetch-Site': 'none', 'X-CSRF': '1' }],
  ['Sec-Fetch-Site: same-origin without X-CSRF', { 'Sec-Fetch-Site': 'same-origin' }],
  [
    'a simple form post',
    { Origin: 'https://evil.test', 'Content-Type': 'application/x-www-form-urlencoded' },
  ],
  ['a text/plain form post', { Origin: 'https://evil.test', 'Content-Type': 'text/plain' }],
  [
    'a method override',
    { Origin: 'https://evil.test', 'X-HTTP-Method-Override': 'GET', 'X-CSRF': '0' },
  ],
];

const CASES = ROUTES.flatMap((route) =>
  FORGERIES.map(([forgery, headers]) => [route.name, forgery, headers, route] as const),
);

async function gatewayFor(route: UnsafeRoute) {
  return route.mode === 'service' ? upstreams.serviceGateway() : upstreams.sessionGateway();
}

/**
 * A refused forgery leaves nothing behind (no cache, limit, session or upstream call: each
 * test checks the last), so the forgeries share one gateway per mode for the file.
 */
function sharedGatewayFor(route: UnsafeRoute) {
  return upstreams.fileGateway({
    env: route.mode === 'service' ? upstreams.serviceEnv() : upstreams.sessionEnv,
  });
}

function send(
  app: Parameters<typeof request>[0],
  route: UnsafeRoute,
  headers: Record<string, string>,
) {
  const body = route.body?.(upstreams);
  const req = request(app)[route.method](route.path);
  if (body === undefined) return req.set(headers);
  return req.set({ 'Content-Type': 'application/json', ...headers }).send(body);
}

describe('cross-site request forgery', () => {
  it.each(CASES)(
    'when %s comes with %s, then it is 403 CSRF_REJECTED before anything runs',
    async (_route, _forgery, headers, spec) => {
      const gw = await sharedGatewayFor(spec);
      const res = await send(gw.app, spec, headers);
      expectProblem(res, 403, 'CSRF_REJECTED');
      expect(res.headers['set-cookie']).toBeUndefined();
      expect(res.headers['access-control-allow-origin']).toBe(
        headers['Origin'] === APP_ORIGIN ? APP_ORIGIN : undefined,
      );
      expect(upstreams.calls()).toEqual([]);
    },
  );

  it.each(ROUTES.map((route) => [route.name, route] as const))(
    'when %s says Sec-Fetch-Site: same-origin and X-CSRF: 1 without an Origin, then it passes the guard',
    async (_route, spec) => {
      const gw = await gatewayFor(spec);
      const res = await send(gw.app, spec, { 'Sec-Fetch-Site': 'same-origin', 'X-CSRF': '1' });
      expect(res.status).toBe(spec.passes);
      if (spec.path !== '/api/auth/logout')
        expect(upstreams.chat.requests.length).toBeGreaterThan(0);
    },
  );

  it.each(ROUTES.map((route) => [route.name, route] as const))(
    'when %s comes from the allowed Origin with X-CSRF: 1, then it passes the guard',
    async (_route, spec) => {
      const gw = await gatewayFor(spec);
      const res = await send(gw.app, spec, { Origin: APP_ORIGIN, 'X-CSRF': '1' });
      expect(res.status).toBe(spec.passes);
    },
  );
});

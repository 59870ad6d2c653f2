import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { ROUTE_TABLE } from '../../src/features/route-table.js';
import type { RouteSpec } from '../../src/http/route-spec.js';
import { cacheCount } from '../helpers/channel-lists.js';
import { BROWSER_HEADERS, type TestGateway } from '../helpers/test-gateway.js';
import { useUpstreams } from '../helpers/upstreams.js';

/*
 * What the route table's declarations decide, tested once over every entry rather than route by
 * route: a route declared cached is served by the hit path and counted under its resource, and a
 * route whose auth needs a caller refuses a request without one before any upstream call.
 */

const upstreams = useUpstreams();

type Route = RouteSpec<never>;
const CACHED = ROUTE_TABLE.filter((route) => route.cache !== undefined) as readonly Route[];
const GUARDED = ROUTE_TABLE.filter(
  (route) => route.auth === 'chatCaller' || route.auth === 'session',
) as readonly Route[];

/** A request path for a route: each path parameter filled with a value its schema accepts. */
const SAMPLE_PARAMS: Record<string, string> = {
  email: 'marie@example.test',
  user_id: '4',
  emoji_name: 'green_tick',
};
/** The query a route needs to answer 200, for the routes with a required parameter. */
const SAMPLE_QUERIES: Record<string, string> = { search: '?q=wireless+headphones' };
const pathOf = (route: Route) => `${fill(route)}${SAMPLE_QUERIES[route.id] ?? ''}`;
const fill = (route: Route) =>
  route.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = SAMPLE_PARAMS[name];
    if (value === undefined) throw new Error(`no sample for the path parameter ${name}`);
    return value;
  });
/** A body its schema accepts, for the routes that take one. */
const SAMPLE_BODIES: Record<string, object> = { setUserStatus: { status_text: 'away' } };

async function gatewayFor(mode: 'session' | 'service') {
  return mode === 'session' ? upstreams.sessionGateway() : upstreams.serviceGateway('member');
}

async function callerCookie(gw: TestGateway, mode: 'session' | 'service') {
  return mode === 'session' ? { Cookie: await upstreams.login(gw, 'member') } : {};
}

describe.each(['session', 'service'] as const)('route declarations, %s mode', (mode) => {
  it('when the gateway is built, then its hit path holds exactly the cached routes of the table', async () => {
    const gw = await gatewayFor(mode);
    expect([...gw.gateway.hitPaths].sort()).toEqual(CACHED.map((route) => route.path).sort());
  });

  it("when the gateway is built, then the hit path answers the misses of exactly the cached routes that need no caller, and leaves a guarded route's to the router", async () => {
    const gw = await gatewayFor(mode);
    const open = CACHED.filter((route) => route.auth === 'none').map((route) => route.path);
    expect(open.length).toBeGreaterThan(0);
    expect([...gw.gateway.answeredInFront].sort()).toEqual(open.sort());
  });

  it.each(CACHED.map((route) => [route.id, route] as const))(
    'when %s is asked twice, then the second answer is a hit counted under its resource',
    async (_id, route) => {
      const gw = await gatewayFor(mode);
      const headers = await callerCookie(gw, mode);
      const first = await request(gw.app).get(pathOf(route)).set(headers);
      expect(first.status, first.text).toBe(200);
      expect(first.headers['x-cache']).toBe('MISS');
      await gw.loader.settled();
      const second = await request(gw.app).get(pathOf(route)).set(headers);
      expect(second.headers['x-cache']).toBe('HIT');
      expect(second.text).toBe(first.text);
      const resource = route.cache?.resource ?? '';
      const text = (await request(gw.app).get('/metrics').expect(200)).text;
      expect(cacheCount(text, resource, 'hit')).toBe(1);
      expect(cacheCount(text, resource, 'miss')).toBe(1);
    },
  );
});

describe('route declarations: guards', () => {
  it.each(GUARDED.map((route) => [route.method, route.path, route] as const))(
    'when %s %s is called without a session, then it is 401 before any upstream call',
    async (_method, _path, route) => {
      const gw = await upstreams.sessionGateway();
      const body = SAMPLE_BODIES[route.id];
      const agent = request(gw.app);
      const sent = agent[route.method](pathOf(route))
        .set(BROWSER_HEADERS)
        .set('Cookie', 'bff_session=not-a-session');
      const res = await (body ? sent.send(body) : sent);
      expect(res.status, res.text).toBe(401);
      expect(res.body).toMatchObject({ code: 'UNAUTHORIZED' });
      expect(upstreams.calls()).toEqual([]);
    },
  );
});

import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { ROUTE_TABLE } from '../../src/features/route-table.js';
import { createRouteTemplates } from '../../src/observability/route-templates.js';
import { createOpenApiDocument } from '../../src/openapi/openapi-document.js';
import { BROWSER_HEADERS, type TestGateway } from '../helpers/test-gateway.js';
import { useUpstreams } from '../helpers/upstreams.js';

/*
 * The route table (src/features/route-table.ts) is the one declaration of every route: the
 * routers mount it, the OpenAPI document and the metrics' route labels are derived from it.
 */

const upstreams = useUpstreams();

/** The path of a template with every `{name}` filled in. */
const concrete = (template: string) => template.replace(/\{[^}]+\}/g, 'x1');

/** A method the route does not declare. */
const otherMethod = (method: string) => (method === 'delete' ? 'put' : 'delete');

async function servedRoutes(gw: TestGateway, sessionMode: boolean) {
  const served = ROUTE_TABLE.filter(
    (route) => !route.undocumented && (route.servedWhen !== 'sessionMode' || sessionMode),
  );
  for (const route of served) {
    // A method the table does not declare for the path (an unsafe one, from a page of the
    // gateway's origin): the router the table mounted says which one it does, 405 with Allow.
    const app = request(gw.app);
    const res = await app[otherMethod(route.method)](concrete(route.path)).set(BROWSER_HEADERS);
    expect({ path: route.path, status: res.status, allow: res.headers['allow'] }).toEqual({
      path: route.path,
      status: 405,
      allow: route.method.toUpperCase(),
    });
  }
  return served;
}

describe('the route table', () => {
  it('declares each operation and each method and path once', () => {
    const ids = ROUTE_TABLE.map((route) => route.id);
    const routes = ROUTE_TABLE.map((route) => `${route.method} ${route.path}`);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(routes).size).toBe(routes.length);
  });

  it('when a gateway runs in service mode, then every route of the table it serves is mounted with its method, and the session routes are not', async () => {
    const gw = await upstreams.serviceGateway();
    await servedRoutes(gw, false);
    for (const route of ROUTE_TABLE.filter((r) => r.servedWhen === 'sessionMode')) {
      const res = await request(gw.app)[route.method](route.path).set(BROWSER_HEADERS);
      expect({ path: route.path, status: res.status }).toEqual({ path: route.path, status: 404 });
    }
  });

  it('when a gateway runs in session mode, then the session routes are mounted too', async () => {
    const gw = await upstreams.sessionGateway();
    const served = await servedRoutes(gw, true);
    expect(served.filter((r) => r.servedWhen === 'sessionMode').map((r) => r.id)).toEqual([
      'login',
      'logout',
      'session',
    ]);
  });

  it('when the OpenAPI document is made, then it lists exactly the documented routes the configuration serves, with their operation ids', () => {
    const options = { maxK: 50, sessionMode: false, metrics: true, health: true };
    const paths = createOpenApiDocument(options)['paths'] as Record<
      string,
      Record<string, { operationId: string }>
    >;
    const listed = Object.entries(paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => `${method} ${path} ${op.operationId}`),
    );
    expect(listed).toEqual(
      ROUTE_TABLE.filter((r) => !r.undocumented && r.servedWhen !== 'sessionMode').map(
        (r) => `${r.method} ${r.path} ${r.id}`,
      ),
    );
  });

  it('when a request names a route of the table, then its metrics label is that route template, whatever its parameters and case', () => {
    const templates = ROUTE_TABLE.map((route) => route.path);
    const routeOf = createRouteTemplates(templates, false);
    for (const template of templates) {
      expect(routeOf(`${concrete(template)}?a=1`)).toBe(template);
      expect(routeOf(`${concrete(template).toUpperCase()}/`)).toBe(template);
    }
    expect(routeOf('/api/chat/users/a/b/c')).toBe('unmatched');
    expect(createRouteTemplates(templates, true)('/about')).toBe('/{path}');
  });
});

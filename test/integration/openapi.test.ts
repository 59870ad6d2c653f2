import { Validator } from '@seriousme/openapi-schema-validator';
import request from 'supertest';
import { openEventStream } from '../helpers/event-stream-client.js';
import { describe, expect, it } from 'vitest';
import { createOpenApiDocument } from '../../src/openapi/openapi-document.js';
import { createResponseChecker } from '../helpers/openapi-responses.js';
import { BROWSER_HEADERS } from '../helpers/test-gateway.js';
import { useUpstreams } from '../helpers/upstreams.js';

/*
 * Contract section 2: /openapi.json describes every route from the zod schemas that validate
 * the requests, and /docs renders it with the gateway's own assets. Every integration test's
 * in-process responses are checked against the document (test/helpers/openapi-responses.ts);
 * this file lints the document and shows that the check catches drift.
 */

const upstreams = useUpstreams();

interface Parameter {
  name: string;
  schema: Record<string, unknown>;
}
interface Document {
  paths: Record<string, Record<string, { parameters?: Parameter[]; responses: object }>>;
  components: {
    schemas: Record<string, { required: string[]; properties: Record<string, unknown> }>;
  };
}

/** The document of a session-mode gateway with every route on its public listener. */
const fullDocument = () =>
  createOpenApiDocument({
    maxK: 100,
    sessionMode: true,
    metrics: true,
    health: true,
  }) as unknown as Document & Record<string, unknown>;

async function served(env: Record<string, string> = {}) {
  const gw = await upstreams.gateway({ env });
  const res = await request(gw.app).get('/openapi.json');
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  return { gw, document: res.body as Document & Record<string, unknown> };
}

describe('/openapi.json', () => {
  it.each([
    ['session', {}],
    ['service', { CHAT_AUTH_MODE: 'service', CHAT_EMAIL: 'a@b.test', CHAT_API_KEY: 'k' }],
  ])('when the gateway runs in %s mode, then its document is valid OpenAPI 3.1', async (_, env) => {
    const { document } = await served(env);
    const validator = new Validator();
    const result = await validator.validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('when the mode is session, then the auth routes are described, and only then', async () => {
    const session = (await served()).document['paths'] as Record<string, unknown>;
    expect(Object.keys(session)).toContain('/api/auth/login');
    const service = (
      await served({ CHAT_AUTH_MODE: 'service', CHAT_EMAIL: 'a@b.test', CHAT_API_KEY: 'k' })
    ).document['paths'] as Record<string, unknown>;
    expect(Object.keys(service)).not.toContain('/api/auth/login');
  });

  it('when OPS_PORT or METRICS=off moves or removes routes, then the document follows', async () => {
    const ops = (await served({ OPS_PORT: '0' })).document['paths'] as object;
    expect(Object.keys(ops)).not.toContain('/healthz');
    expect(Object.keys(ops)).not.toContain('/metrics');
    const off = (await served({ METRICS: 'off' })).document['paths'] as object;
    expect(Object.keys(off)).toContain('/readyz');
    expect(Object.keys(off)).not.toContain('/metrics');
  });

  it('when SEARCH_MAX_K is set, then k is described with that maximum, as it is validated', async () => {
    const { gw, document } = await served({ SEARCH_MAX_K: '40' });
    const k = document.paths['/api/search']?.['get']?.parameters?.find((p) => p.name === 'k');
    expect(k?.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 40 });
    const res = await request(gw.app).get('/api/search?q=x&k=41');
    expect(res.status).toBe(400);
    expect((res.body as { detail: string }).detail).toContain(
      'k must be a whole number from 1 to 40',
    );
  });

  it('when every documented path is asked, then the gateway routes it (no 404 for a described route)', async () => {
    const { gw, document } = await served();
    const cookie = await upstreams.login(gw, 'member');
    for (const [template, operations] of Object.entries(document.paths)) {
      const path = template
        .replace('{email}', 'iago@zulip.example.test')
        .replace('{user_id}', '4')
        .replace('{emoji_name}', 'green_tick');
      for (const [method, operation] of Object.entries(operations)) {
        const verb = method as 'get' | 'post' | 'delete';
        if (isEventStream(operation)) {
          // A stream never ends by itself: its answer's head says whether it was routed.
          const stream = await openEventStream(`${gw.gateway.url}${path}`, { Cookie: cookie });
          stream.close();
          expect(stream.status, `${method} ${template}`).toBe(200);
          continue;
        }
        const res = await request(gw.app)[verb](path).set(BROWSER_HEADERS).set('Cookie', cookie);
        // A 404 from an upstream (no such user) is an answer; the gateway's own is "no route".
        const source = (res.body as { source?: string } | undefined)?.source;
        expect(source === 'gateway' && res.status === 404, `${method} ${template}`).toBe(false);
      }
    }
    expect(gw.openapi.checked).toBeGreaterThan(10);
    expect(gw.openapi.drift).toEqual([]);
  });
});

describe('the response check every integration test runs', () => {
  it('when a response has a status the document does not list, then it is reported', async () => {
    const gw = await upstreams.gateway();
    const document = fullDocument();
    delete (document.paths['/api/search']!['get']!.responses as Record<string, unknown>)['400'];
    const checker = createResponseChecker(document);
    await request(checker.wrap(gw.app)).get('/api/search?q=');
    expect(checker.drift).toEqual([
      expect.objectContaining({ request: 'GET /api/search', status: 400 }),
    ]);
  });

  it('when a body does not match its schema, then it is reported with the reason', async () => {
    const gw = await upstreams.gateway();
    const document = fullDocument();
    document.components.schemas['Problem']!.required.push('extra');
    const checker = createResponseChecker(document);
    await request(checker.wrap(gw.app)).get('/api/search?q=');
    expect(checker.drift[0]?.problem).toContain('extra');
  });

  it('when a success body drifts, then it is reported too', async () => {
    const gw = await upstreams.gateway();
    const document = fullDocument();
    document.components.schemas['ResultList']!.properties['itemScore'] = { type: 'string' };
    const checker = createResponseChecker(document);
    const res = await request(checker.wrap(gw.app)).get('/api/search?q=lamp&k=3');
    expect(res.status).toBe(200);
    expect(checker.drift[0]).toMatchObject({ status: 200 });
    expect(checker.drift[0]?.problem).toContain('itemScore');
  });
});

describe('/docs', () => {
  it('when a person opens /docs, then Swagger UI loads from the gateway itself under a strict CSP', async () => {
    const gw = await upstreams.gateway();
    const page = await request(gw.app).get('/docs');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = page.headers['content-security-policy'] as string;
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/script-src[^;]*unsafe/);
    const sources = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(sources.length).toBeGreaterThanOrEqual(3);
    for (const source of sources) {
      expect(source.startsWith('/docs/'), source).toBe(true);
      const asset = await request(gw.app).get(source);
      expect(asset.status, source).toBe(200);
    }
  });

  it('when a file of the docs package that the page does not use is asked, then it is 404', async () => {
    const gw = await upstreams.gateway();
    for (const path of ['/docs/package.json', '/docs/..%2Fpackage.json', '/docs/index.html']) {
      const res = await request(gw.app).get(path);
      expect(res.status, path).toBe(404);
      expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    }
  });
});

describe('OpenAPI security, from the route table', () => {
  type Op = { security?: Record<string, string[]>[]; responses: Record<string, unknown> };
  const operations = (document: Record<string, unknown>) =>
    new Map(
      Object.values(
        document['paths'] as Record<string, Record<string, Op & { operationId: string }>>,
      )
        .flatMap((methods) => Object.values(methods))
        .map((op) => [op.operationId, op] as const),
    );

  it("when the document is made, then every operation states its security by the route's auth kind", () => {
    const session = operations(
      createOpenApiDocument({
        maxK: 10,
        sessionMode: true,
        metrics: true,
        health: true,
        metricsToken: true,
      }),
    );
    const service = operations(
      createOpenApiDocument({ maxK: 10, sessionMode: false, metrics: true, health: true }),
    );
    for (const [id, op] of session) expect(op.security, id).toBeDefined();
    expect(session.get('listChannels')?.security).toEqual([{ sessionCookie: [] }]);
    expect(session.get('session')?.security).toEqual([{ sessionCookie: [] }]);
    expect(session.get('search')?.security).toEqual([]);
    expect(session.get('metrics')?.security).toEqual([{ metricsToken: [] }]);
    expect(session.get('listChannels')?.responses['401']).toBeDefined();
    // Service mode: the chat routes act as the service account; no cookie, no 401.
    expect(service.get('listChannels')?.security).toEqual([]);
    expect(service.get('listChannels')?.responses['401']).toBeUndefined();
    expect(service.get('metrics')?.security).toEqual([]);
  });

  it('when the document is made, then it names exactly the security schemes its operations use', () => {
    const schemes = (options: Parameters<typeof createOpenApiDocument>[0]) =>
      Object.keys(
        (createOpenApiDocument(options)['components'] as Record<string, object>)[
          'securitySchemes'
        ] ?? {},
      ).sort();
    expect(
      schemes({ maxK: 10, sessionMode: true, metrics: true, health: true, metricsToken: true }),
    ).toEqual(['metricsToken', 'sessionCookie']);
    expect(schemes({ maxK: 10, sessionMode: false, metrics: true, health: true })).toEqual([]);
  });

  it('when an answer has a schema, then the document names it among its components', () => {
    const document = fullDocument();
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining(['ChannelList', 'ChannelFolders', 'ResultList', 'Problem']),
    );
    const ok = document.paths['/api/chat/channels']?.['get']?.responses as Record<
      string,
      { content: Record<string, { schema: unknown }> }
    >;
    expect(ok['200']?.content['application/json']?.schema).toEqual({
      $ref: '#/components/schemas/ChannelList',
    });
  });
});

/** An operation whose success is a server-sent event stream (`GET /api/events`). */
function isEventStream(operation: unknown): boolean {
  const ok = (operation as { responses?: Record<string, { content?: object }> }).responses?.['200'];
  return ok?.content !== undefined && 'text/event-stream' in ok.content;
}

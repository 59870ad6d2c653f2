import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { APP_ORIGIN } from '../helpers/test-gateway.js';
import {
  errorPaths,
  expectNoPollution,
  expectProblem,
  prototypeKeys,
  useUpstreams,
} from './hostile-helpers.js';

/*
 * Hostile query strings and JSON keys: prototype-pollution keys and prototype member names as
 * values, repeated and bracketed parameters. Each is refused with its exact status before any
 * upstream call, or handled with only the normalised input reaching the upstream. (Bodies are
 * in hostile-bodies.test.ts.)
 */

const upstreams = useUpstreams();
const pristine = prototypeKeys();

const paths = (res: request.Response) =>
  ((res.body as { errors?: { path: string; message: string }[] }).errors ?? []).map(
    (e) => `${e.path}: ${e.message}`,
  );

describe('prototype-pollution keys', () => {
  it.each([
    ['__proto__[x]=1&q=a', '/v1/search?q=a&k=10'],
    ['constructor[prototype][x]=1&q=a', '/v1/search?q=a&k=10'],
    ['q=a&__proto__=x', '/v1/search?q=a&k=10'],
    ['q=a&__proto__[x]=1&constructor[prototype][x]=1&prototype[x]=1', '/v1/search?q=a&k=10'],
    ['q=a&hasOwnProperty=1&toString=x&valueOf=y', '/v1/search?q=a&k=10'],
    ['q=__proto__', '/v1/search?q=__proto__&k=10'],
    ['q=constructor&k=1', '/v1/search?q=constructor&k=1'],
  ])(
    'when the search query is %s, then it is 200, only q and k go upstream and nothing is polluted',
    async (query, upstreamUrl) => {
      const gw = await upstreams.serviceGateway();
      const res = await request(gw.app).get(`/api/search?${query}`);
      expect(res.status).toBe(200);
      expect(upstreams.search.requests.map((r) => r.url)).toEqual([upstreamUrl]);
      expectNoPollution(pristine);
      await request(gw.app).get('/api/search?q=after&k=1').expect(200);
    },
  );

  it.each([
    ['/api/search?__proto__[q]=a', 'query.q: q is required'],
    ['/api/search?__proto__=x', 'query.q: q is required'],
    ['/api/search?q=a&sort=constructor', 'query.sort: sort must be one of'],
    ['/api/search?q=a&sort=__proto__', 'query.sort: sort must be one of'],
    ['/api/search?q=a&sort=toString', 'query.sort: sort must be one of'],
    ['/api/search?q=a&sort=hasOwnProperty', 'query.sort: sort must be one of'],
    ['/api/search?q=a&k=constructor', 'query.k: k must be a whole number'],
    ['/api/search?q=a&k=__proto__', 'query.k: k must be a whole number'],
    ['/api/chat/channel-folders?include_archived=constructor', 'query.include_archived: '],
    ['/api/chat/channel-folders?include_archived=__proto__', 'query.include_archived: '],
    ['/api/chat/users/marie@acme.test?client_gravatar=toString', 'query.client_gravatar: '],
  ])(
    'when %s names a prototype member as a value, then it is 400 with no upstream call',
    async (path, message) => {
      const gw = await upstreams.serviceGateway();
      const res = await request(gw.app).get(path);
      expectProblem(res, 400, 'VALIDATION_FAILED');
      expect(paths(res).join(' | ')).toContain(message);
      expect(upstreams.calls()).toEqual([]);
      expectNoPollution(pristine);
    },
  );

  it('when channel folders are asked with prototype keys, then the server gets only include_archived=false', async () => {
    const gw = await upstreams.serviceGateway();
    const res = await request(gw.app).get(
      '/api/chat/channel-folders?__proto__[x]=1&constructor[prototype][x]=1',
    );
    expect(res.status).toBe(200);
    expect(upstreams.chat.requests.map((r) => r.url)).toEqual([
      '/api/v1/channel_folders?include_archived=false',
    ]);
    expectNoPollution(pristine);
  });

  it.each([
    ['{"__proto__":{"x":1}}', 'unknown field "__proto__"'],
    ['{"status_text":"x","__proto__":{"x":1,"admin":true}}', 'unknown field "__proto__"'],
    ['{"constructor":{"prototype":{"x":1}}}', 'unknown field "constructor"'],
    ['{"status_text":"x","constructor":{"prototype":{"x":1}}}', 'unknown field "constructor"'],
    ['{"prototype":{"x":1}}', 'unknown field "prototype"'],
    ['{"status_text":{"__proto__":{"x":1}}}', 'status_text must be a string'],
    ['{"emoji_name":"a","reaction_type":"constructor"}', 'reaction_type must be one of'],
    ['{"emoji_name":"a","reaction_type":"__proto__"}', 'reaction_type must be one of'],
    ['{"emoji_name":"a","reaction_type":"toString"}', 'reaction_type must be one of'],
  ])(
    'when the status body is %s, then it is 400 with no upstream call, nothing is polluted and the route still works',
    async (body, message) => {
      const gw = await upstreams.serviceGateway();
      const res = await request(gw.app)
        .post('/api/chat/users/4/status')
        .set({ Origin: APP_ORIGIN, 'X-CSRF': '1', 'Content-Type': 'application/json' })
        .send(body);
      expectProblem(res, 400, 'VALIDATION_FAILED');
      expect(paths(res).join(' | ')).toContain(message);
      expect(upstreams.calls()).toEqual([]);
      expectNoPollution(pristine);
      await request(gw.app)
        .post('/api/chat/users/4/status')
        .set({ Origin: APP_ORIGIN, 'X-CSRF': '1' })
        .send({ status_text: 'after' })
        .expect(204);
    },
  );

  it.each([
    [
      'a __proto__ key',
      (e: string, p: string) => `{"email":"${e}","password":"${p}","__proto__":{"x":1}}`,
      'unknown field "__proto__"',
    ],
    [
      'credentials inside __proto__',
      (e: string, p: string) => `{"__proto__":{"email":"${e}","password":"${p}"}}`,
      'unknown field "__proto__"',
    ],
    [
      'a constructor key',
      (e: string, p: string) =>
        `{"email":"${e}","password":"${p}","constructor":{"prototype":{"x":1}}}`,
      'unknown field "constructor"',
    ],
    [
      'a prototype key',
      (e: string, p: string) => `{"email":"${e}","password":"${p}","prototype":{"x":1}}`,
      'unknown field "prototype"',
    ],
    [
      'an object email with __proto__',
      (_e: string, p: string) => `{"email":{"__proto__":{"x":1}},"password":"${p}"}`,
      'body.email',
    ],
  ])(
    'when a login body with the right password has %s, then it is 400 with no upstream call and login still works',
    async (_name, build, message) => {
      const gw = await upstreams.sessionGateway();
      const { email, password } = upstreams.chat.credentials('member');
      const res = await request(gw.app)
        .post('/api/auth/login')
        .set({ Origin: APP_ORIGIN, 'X-CSRF': '1', 'Content-Type': 'application/json' })
        .send(build(email, password ?? ''));
      expectProblem(res, 400, 'VALIDATION_FAILED');
      expect(paths(res).join(' | ')).toContain(message);
      expect(res.headers['set-cookie']).toBeUndefined();
      expect(upstreams.calls()).toEqual([]);
      expectNoPollution(pristine);
      await upstreams.login(gw, 'member');
    },
  );
});

describe('repeated and bracketed parameters', () => {
  it.each([
    ['/api/search?q=a&q=b', 'query.q: q must be given once'],
    ['/api/search?q=a&q=a', 'query.q: q must be given once'],
    ['/api/search?q[]=a', 'query.q: q is required'],
    ['/api/search?q[]=a&q[]=b', 'query.q: q is required'],
    ['/api/search?q[a]=b', 'query.q: q is required'],
    ['/api/search?q=a&k=1&k=2', 'query.k: k must be given once'],
    ['/api/search?q=a&sort=rating&sort=price_asc', 'query.sort: sort must be given once'],
    ['/api/search?cursor=x.y&cursor=x.y', 'query.cursor: cursor must be given once'],
    [
      '/api/chat/channel-folders?include_archived=true&include_archived=false',
      'query.include_archived: include_archived must be given once',
    ],
    [
      '/api/chat/channel-folders?include_archived=1&include_archived=1',
      'query.include_archived: include_archived must be given once',
    ],
    [
      '/api/chat/users/marie@acme.test?client_gravatar=1&client_gravatar=0',
      'query.client_gravatar: client_gravatar must be given once',
    ],
    [
      '/api/chat/users/marie@acme.test?include_custom_profile_fields=true&include_custom_profile_fields=true',
      'query.include_custom_profile_fields: include_custom_profile_fields must be given once',
    ],
  ])(
    'when %s, then it is 400 naming the parameter, with no upstream call',
    async (path, message) => {
      const gw = await upstreams.serviceGateway();
      const res = await request(gw.app).get(path);
      const body = expectProblem(res, 400, 'VALIDATION_FAILED');
      expect(paths(res)).toContain(message);
      expect(errorPaths(body)).toHaveLength(1);
      expect(upstreams.calls()).toEqual([]);
    },
  );

  it.each([
    ['/api/search?q=a&q[]=b', '/v1/search?q=a&k=10'],
    ['/api/search?q=a&k[]=2', '/v1/search?q=a&k=10'],
    ['/api/search?q=a&Q=b&K=3', '/v1/search?q=a&k=10'],
    ['/api/search?q=a%26k%3D100', '/v1/search?q=a%26k%3D100&k=10'],
    ['/api/search?q=a%23frag&k=1', '/v1/search?q=a%23frag&k=1'],
    ['/api/search?q=a%0D%0AHost:%20evil.test', '/v1/search?q=a+Host%3A+evil.test&k=10'],
    [
      '/api/chat/channel-folders?include_archived[]=true',
      '/api/v1/channel_folders?include_archived=false',
    ],
  ])(
    'when %s smuggles a name or separator, then the upstream gets exactly %s',
    async (path, upstreamUrl) => {
      const gw = await upstreams.serviceGateway();
      const res = await request(gw.app).get(path);
      expect(res.status).toBe(200);
      expect(upstreams.calls().map((r) => r.url)).toEqual([upstreamUrl]);
    },
  );
});

import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { useUpstreams } from '../helpers/upstreams.js';

/* STATIC_DIR (contract section 1): a built frontend from the gateway's own origin. */

const upstreams = useUpstreams();
const site = mkdtempSync(join(tmpdir(), 'bff-site-'));
mkdirSync(join(site, 'assets'));
writeFileSync(
  join(site, 'index.html'),
  '<!doctype html><title>app</title><script type="module" src="/assets/app.3f9a1c2b.js"></script>',
);
writeFileSync(join(site, 'assets', 'app.3f9a1c2b.js'), 'console.log("app");');
writeFileSync(join(site, 'robots.txt'), 'User-agent: *');
writeFileSync(join(site, '.env'), 'SECRET=1');
afterAll(() => rmSync(site, { recursive: true, force: true }));

const gateway = () =>
  upstreams.gateway({
    env: { STATIC_DIR: site, STATIC_IMG_SRC: "'self' https://img.example.test" },
  });

describe('a frontend served from STATIC_DIR', () => {
  it('when / is asked, then index.html comes with a page CSP and no-cache', async () => {
    const res = await request((await gateway()).app)
      .get('/')
      .set('Accept', 'text/html');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-cache');
    const csp = res.headers['content-security-policy'] as string;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("img-src 'self' https://img.example.test");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('upgrade-insecure-requests');
  });

  it('when a fingerprinted asset is asked, then it is cached immutable for a year; other files are revalidated', async () => {
    const gw = await gateway();
    const asset = await request(gw.app).get('/assets/app.3f9a1c2b.js');
    expect(asset.status).toBe(200);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const plain = await request(gw.app).get('/robots.txt');
    expect(plain.headers['cache-control']).toBe('no-cache');
    expect(plain.headers['etag']).toBeDefined();
  });

  it('when a client-side route is reloaded, then index.html answers; an API path or a JSON request stays a 404 problem', async () => {
    const gw = await gateway();
    const route = await request(gw.app)
      .get('/orders/42')
      .set('Accept', 'text/html,application/xhtml+xml');
    expect(route.status).toBe(200);
    expect(route.text).toContain('<title>app</title>');
    const api = await request(gw.app).get('/api/nothing').set('Accept', 'text/html');
    expect(api.status).toBe(404);
    expect(api.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    const json = await request(gw.app).get('/orders/42').set('Accept', 'application/json');
    expect(json.status).toBe(404);
  });

  it('when a dotfile is asked, then it is not served', async () => {
    const res = await request((await gateway()).app)
      .get('/.env')
      .set('Accept', 'text/plain');
    expect(res.status).toBe(404);
    expect(res.text).not.toContain('SECRET');
  });

  it('when STATIC_DIR has no index.html, then the gateway does not start', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'bff-empty-'));
    await expect(upstreams.gateway({ env: { STATIC_DIR: empty } })).rejects.toThrow(
      /STATIC_DIR has no index.html/,
    );
    rmSync(empty, { recursive: true, force: true });
  });
});

describe('the typed client for pages without a build step (/vendor/openapi-fetch.mjs)', () => {
  const installed = readFileSync(
    createRequire(import.meta.url).resolve('openapi-fetch/dist/index.mjs'),
  );

  it('when it is asked, then the installed openapi-fetch ES module comes from the gateway as JavaScript, revalidated by its ETag', async () => {
    const gw = await gateway();
    const res = await request(gw.app)
      .get('/vendor/openapi-fetch.mjs')
      .buffer(true)
      .parse((r, done) => {
        const chunks: Buffer[] = [];
        r.on('data', (chunk: Buffer) => chunks.push(chunk));
        r.on('end', () => done(null, Buffer.concat(chunks)));
      });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-cache');
    expect((res.body as Buffer).equals(installed)).toBe(true);
    const again = await request(gw.app)
      .get('/vendor/openapi-fetch.mjs')
      .set('If-None-Match', res.headers['etag'] as string);
    expect(again.status).toBe(304);
  });

  it("when the demo page is served, then every module it imports resolves on the gateway's origin as JavaScript", async () => {
    const page = fileURLToPath(new URL('../../simulators/demo-page/', import.meta.url));
    const gw = await upstreams.gateway({ env: { STATIC_DIR: page } });
    const html = await request(gw.app).get('/').set('Accept', 'text/html');
    const entries = [...html.text.matchAll(/<script type="module" src="([^"]+)">/g)].map(
      (m) => m[1]!,
    );
    expect(entries).toEqual(['/app.js']);
    const seen = new Set<string>();
    const queue = [...entries];
    for (let path = queue.shift(); path !== undefined; path = queue.shift()) {
      if (seen.has(path)) continue;
      seen.add(path);
      const res = await request(gw.app).get(path);
      expect(res.status, path).toBe(200);
      expect(res.headers['content-type'], path).toBe('text/javascript; charset=utf-8');
      // Static imports only (JSDoc `@import` lines are types, never loaded).
      for (const [, specifier] of res.text.matchAll(/^import\s[^;]*?from\s+'([^']+)';/gm)) {
        expect(specifier, `${path} imports ${specifier}`).toMatch(/^\.\.?\//);
        queue.push(new URL(specifier!, `http://gateway${path}`).pathname);
      }
    }
    expect([...seen].sort()).toEqual(['/app.js', '/client.js', '/vendor/openapi-fetch.mjs']);
  });
});

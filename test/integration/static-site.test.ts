import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

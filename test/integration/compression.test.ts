import { createHash } from 'node:crypto';
import type { RequestListener } from 'node:http';
import { fileURLToPath } from 'node:url';
import zlib, { brotliDecompressSync, gunzipSync } from 'node:zlib';
import express from 'express';
import request from 'supertest';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { compressSentBodies } from '../../src/http/compressed-send.js';
import { createCompressionStage } from '../../src/http/compression.js';
import { rawRequest, type RawResponse } from '../helpers/raw-request.js';
import { APP_ORIGIN, BROWSER_HEADERS } from '../helpers/test-gateway.js';
import { useUpstreams } from '../helpers/upstreams.js';

/*
 * Content coding (contract section 4): br and gzip from stored bytes for cached resources, per
 * request for other bodies, once for files; negotiation by weight with br first at equal
 * weight; a strong ETag per coding; Vary merged; HEAD like GET; nothing coded where the
 * contract forbids it; COMPRESSION=off changes nothing. Bytes are read off the wire as sent
 * (rawRequest), never through a client that decodes them.
 */

const upstreams = useUpstreams();
afterEach(() => {
  vi.restoreAllMocks();
});

const SEARCH = '/api/search?q=wireless+headphones&k=10';
const DEMO_PAGE = fileURLToPath(new URL('../../simulators/demo-page/', import.meta.url));
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('base64url');

function get(
  app: RequestListener,
  path: string,
  encoding: string | undefined,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<RawResponse> {
  return rawRequest(app, {
    method,
    path,
    headers: { ...(encoding === undefined ? {} : { 'Accept-Encoding': encoding }), ...headers },
  });
}

/** The body as the client had it before the coding the answer names. */
function decode(res: RawResponse): Buffer {
  switch (res.headers['content-encoding']) {
    case 'br':
      return brotliDecompressSync(res.bytes);
    case 'gzip':
      return gunzipSync(res.bytes);
    case undefined:
      return res.bytes;
    default:
      throw new Error(`unexpected coding ${res.headers['content-encoding']}`);
  }
}

const varyOf = (res: RawResponse) =>
  String(res.headers['vary'] ?? '')
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);

/**
 * The three representations of one resource: identity, br and gzip, each with the length of
 * what was sent, each saying it varies with Accept-Encoding, the coded ones decoding to exactly
 * the identity bytes.
 */
async function expectCodings(
  app: RequestListener,
  path: string,
  headers: Record<string, string> = {},
  status = 200,
): Promise<{ identity: RawResponse; br: RawResponse; gzip: RawResponse }> {
  const identity = await get(app, path, 'identity', headers);
  const br = await get(app, path, 'gzip, deflate, br', headers);
  const gzip = await get(app, path, 'gzip', headers);
  expect(identity.headers['content-encoding']).toBeUndefined();
  expect(br.headers['content-encoding']).toBe('br');
  expect(gzip.headers['content-encoding']).toBe('gzip');
  for (const res of [identity, br, gzip]) {
    expect(res.status).toBe(status);
    expect(Number(res.headers['content-length'])).toBe(res.bytes.length);
    expect(res.headers['transfer-encoding']).toBeUndefined();
    expect(varyOf(res)).toContain('Accept-Encoding');
    expect(res.headers['content-type']).toBe(identity.headers['content-type']);
  }
  expect(identity.bytes.length).toBeGreaterThan(0);
  expect(br.bytes.length).toBeLessThan(identity.bytes.length);
  expect(gzip.bytes.length).toBeLessThan(identity.bytes.length);
  expect(decode(br).equals(identity.bytes)).toBe(true);
  expect(decode(gzip).equals(identity.bytes)).toBe(true);
  return { identity, br, gzip };
}

/** Each coding its own strong ETag over the identity bytes' digest. */
function expectEtags(codings: { identity: RawResponse; br: RawResponse; gzip: RawResponse }) {
  const digest = sha256(codings.identity.bytes);
  expect(codings.identity.headers['etag']).toBe(`"${digest}"`);
  expect(codings.br.headers['etag']).toBe(`"${digest}-br"`);
  expect(codings.gzip.headers['etag']).toBe(`"${digest}-gz"`);
}

describe.each(['memory', 'redis'] as const)('cached resources (%s)', (cache) => {
  it('when a search is asked in each coding, then each decodes to exactly the identity bytes and has its own ETag', async () => {
    const gw = await upstreams.gateway({ cache });
    const miss = await get(gw.app, SEARCH, 'br');
    expect(miss.headers['x-cache']).toBe('MISS');
    await gw.loader.settled();
    const codings = await expectCodings(gw.app, SEARCH);
    expectEtags(codings);
    expect(codings.br.headers['x-cache']).toBe('HIT');
    // The miss's br bytes are the stored ones the hit sends.
    expect(codings.br.bytes.equals(miss.bytes)).toBe(true);
    expect(codings.identity.headers['cache-control']).toBe('private, no-cache');
  });

  it('when LD-JSON is asked in each coding, then each decodes to exactly the identity bytes', async () => {
    const gw = await upstreams.gateway({ cache });
    const ld = { Accept: 'application/ld+json' };
    const codings = await expectCodings(gw.app, SEARCH, ld);
    expect(codings.identity.headers['content-type']).toBe('application/ld+json; charset=utf-8');
    expectEtags(codings);
  });

  it('when channel folders are asked in each coding, then each decodes to exactly the identity bytes', async () => {
    // The simulator's folder list is short: a lower threshold makes it worth compressing.
    const gw = await upstreams.serviceGateway(
      'administrator',
      { COMPRESSION_MIN_BYTES: '64' },
      cache,
    );
    const codings = await expectCodings(gw.app, '/api/chat/channel-folders');
    expectEtags(codings);
  });

  it('when the br ETag is sent back, then it is a 304 only for a request that would get br', async () => {
    const gw = await upstreams.gateway({ cache });
    const { identity, br, gzip } = await expectCodings(gw.app, SEARCH);
    await gw.loader.settled();
    const brTag = br.headers['etag'] as string;
    const withBrTag = (encoding: string | undefined) =>
      get(gw.app, SEARCH, encoding, { 'If-None-Match': brTag, Origin: APP_ORIGIN });

    const notModified = await withBrTag('br, gzip');
    expect(notModified.status).toBe(304);
    expect(notModified.bytes.length).toBe(0);
    expect(notModified.headers['content-encoding']).toBeUndefined();
    expect(notModified.headers['content-length']).toBeUndefined();
    expect(notModified.headers['etag']).toBe(brTag);
    expect(notModified.headers['vary']).toBe('Origin, Accept, Accept-Encoding');
    expect(notModified.headers['x-cache']).toBe('HIT');

    const weak = await withBrTag('br');
    expect(weak.status).toBe(304);

    const asGzip = await withBrTag('gzip');
    expect(asGzip.status).toBe(200);
    expect(asGzip.headers['etag']).toBe(gzip.headers['etag']);
    expect(decode(asGzip).equals(identity.bytes)).toBe(true);

    const asIdentity = await withBrTag(undefined);
    expect(asIdentity.status).toBe(200);
    expect(asIdentity.headers['etag']).toBe(identity.headers['etag']);
    expect(asIdentity.bytes.equals(identity.bytes)).toBe(true);

    // The identity tag does not make a br request's answer a 304 either.
    const identityTag = await get(gw.app, SEARCH, 'br', {
      'If-None-Match': identity.headers['etag'] as string,
    });
    expect(identityTag.status).toBe(200);
    expect(identityTag.headers['content-encoding']).toBe('br');

    const list = await get(gw.app, SEARCH, 'gzip', {
      'If-None-Match': `W/${brTag}, ${gzip.headers['etag'] as string}`,
    });
    expect(list.status).toBe(304);
  });

  it('when a search with CORS is answered, then Vary holds Origin, Accept and Accept-Encoding in every coding', async () => {
    const gw = await upstreams.gateway({ cache });
    for (const encoding of [undefined, 'identity', 'br', 'gzip']) {
      const res = await get(gw.app, SEARCH, encoding, { Origin: APP_ORIGIN });
      expect(res.headers['vary']).toBe('Origin, Accept, Accept-Encoding');
      expect(res.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
    }
  });

  it('when a search is asked with HEAD, then it carries the headers its GET would, coding and length included', async () => {
    const gw = await upstreams.gateway({ cache });
    const full = await get(gw.app, SEARCH, 'br');
    await gw.loader.settled();
    const hit = await get(gw.app, SEARCH, 'br');
    for (const encoding of ['br', 'gzip', 'identity']) {
      const headOnly = await get(gw.app, SEARCH, encoding, {}, 'HEAD');
      const whole = await get(gw.app, SEARCH, encoding);
      expect(headOnly.status).toBe(200);
      expect(headOnly.bytes.length).toBe(0);
      for (const name of ['content-encoding', 'content-length', 'content-type', 'etag', 'vary']) {
        expect(headOnly.headers[name], name).toBe(whole.headers[name]);
      }
    }
    expect(hit.bytes.equals(full.bytes)).toBe(true);
  });

  it('when a miss is answered as it is, then no compression runs and the entry is stored without compressed bodies', async () => {
    const brotli = vi.spyOn(zlib, 'brotliCompressSync');
    const gzip = vi.spyOn(zlib, 'gzipSync');
    const gw = await upstreams.gateway({ cache });
    const miss = await get(gw.app, SEARCH, undefined);
    expect(miss.headers['x-cache']).toBe('MISS');
    await gw.loader.settled();
    expect(brotli).not.toHaveBeenCalled();
    expect(gzip).not.toHaveBeenCalled();
    // The search's cache key (search-service.ts): its query as the upstream gets it, hashed.
    const key = `search:v3:json:relevance:upstream:{${sha256(Buffer.from('q=wireless+headphones&k=10'))}}`;
    const entry = await gw.store.get(key);
    expect(entry?.body.equals(miss.bytes)).toBe(true);
    expect(entry?.encoded).toBeUndefined();
  });

  /*
   * Ten hits in each coding: a hit after the first that compressed again would show as a
   * second call. A hundred proved nothing more and took 17 s of the 20 s test timeout on a
   * loaded machine (issue 31, item 10): the count is what the claim needs, not what fits.
   */
  const HITS = 20;

  it('when compressed hits in both codings follow a br miss, then each coding was compressed once, by the first answer in it', async () => {
    const brotli = vi.spyOn(zlib, 'brotliCompressSync');
    const gzip = vi.spyOn(zlib, 'gzipSync');
    const gw = await upstreams.gateway({ cache });
    const miss = await get(gw.app, SEARCH, 'br');
    expect(miss.headers['x-cache']).toBe('MISS');
    await gw.loader.settled();
    // The miss's br was the stored one; nobody has asked for gzip yet.
    expect(brotli).toHaveBeenCalledTimes(1);
    expect(gzip).not.toHaveBeenCalled();
    brotli.mockClear();

    const app = request(gw.app);
    for (let i = 0; i < HITS; i += 1) {
      const encoding = i % 2 === 0 ? 'br' : 'gzip';
      const res = await app.get(SEARCH).set('Accept-Encoding', encoding);
      expect(res.headers['x-cache']).toBe('HIT');
      expect(res.headers['content-encoding']).toBe(encoding);
    }
    await gw.loader.settled();
    expect(brotli).not.toHaveBeenCalled();
    // The first gzip hit made it and kept it with the entry; the others sent those bytes.
    expect(gzip).toHaveBeenCalledTimes(1);
  });

  it('when 20 hits in a coding the entry lacks arrive at once, then it is compressed once and added to the entry once', async () => {
    const gw = await upstreams.gateway({ cache });
    await get(gw.app, SEARCH, undefined);
    await gw.loader.settled();
    const gzip = vi.spyOn(zlib, 'gzipSync');
    const added = vi.spyOn(gw.store, 'addEncoding');
    const hits = await Promise.all(Array.from({ length: 20 }, () => get(gw.app, SEARCH, 'gzip')));
    await gw.loader.settled();
    for (const hit of hits) {
      expect(hit.headers['x-cache']).toBe('HIT');
      expect(gunzipSync(hit.bytes).toString()).toBe(gunzipSync(hits[0]!.bytes).toString());
    }
    expect(gzip).toHaveBeenCalledTimes(1);
    expect(added).toHaveBeenCalledTimes(1);
    expect(added.mock.calls[0]?.[2].coding).toBe('gzip');
  });

  it('when the answer is under COMPRESSION_MIN_BYTES, then it is sent as it is, with no Vary on Accept-Encoding', async () => {
    const gw = await upstreams.gateway({ cache, env: { COMPRESSION_MIN_BYTES: '1000000' } });
    const res = await get(gw.app, SEARCH, 'br', { Origin: APP_ORIGIN });
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.headers['vary']).toBe('Origin, Accept');
    expect(res.headers['etag']).toBe(`"${sha256(res.bytes)}"`);
  });
});

describe('negotiation on the wire', () => {
  it.each([
    [undefined, undefined],
    ['gzip, br', 'br'],
    ['br, gzip', 'br'],
    ['br;q=0.5, gzip', 'gzip'],
    ['gzip;q=0.5', undefined],
    ['identity;q=0, gzip;q=0', undefined],
    ['identity;q=0, gzip;q=0.1', 'gzip'],
    ['*', 'br'],
    ['br;q=0, *', 'gzip'],
    ['deflate, zstd', undefined],
    ['x-gzip', 'gzip'],
  ])('when Accept-Encoding is %j, then the search is sent as %s', async (header, coding) => {
    const gw = await upstreams.gateway();
    const res = await get(gw.app, SEARCH, header);
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBe(coding);
    expect(JSON.parse(decode(res).toString('utf8'))).toHaveProperty('itemListElement');
  });
});

describe('answers made per request', () => {
  it('when drafts, a user and bootstrap are asked in each coding, then each decodes to exactly the identity bytes', async () => {
    const gw = await upstreams.serviceGateway('administrator', { COMPRESSION_MIN_BYTES: '64' });
    for (const path of [
      '/api/chat/drafts',
      '/api/chat/users/user6@chat.example.test',
      '/api/bootstrap',
    ]) {
      const codings = await expectCodings(gw.app, path);
      expect(codings.identity.headers['cache-control'], path).toBe('no-store');
    }
  });

  it('when bootstrap is asked with HEAD, then it carries the headers its GET would', async () => {
    const gw = await upstreams.serviceGateway('administrator', { COMPRESSION_MIN_BYTES: '64' });
    const whole = await get(gw.app, '/api/bootstrap', 'br');
    const headOnly = await get(gw.app, '/api/bootstrap', 'br', {}, 'HEAD');
    expect(headOnly.bytes.length).toBe(0);
    expect(headOnly.headers['content-encoding']).toBe('br');
    expect(headOnly.headers['content-length']).toBe(whole.headers['content-length']);
  });

  it('when a large problem body is answered, then it is compressed like any other', async () => {
    const gw = await upstreams.serviceGateway();
    // Every unknown field is named in the answer: a body well over the default threshold.
    const body = Object.fromEntries(
      Array.from({ length: 60 }, (_, i) => [`unexpected_field_${i}`, i]),
    );
    const send = (encoding: string) =>
      request(gw.app)
        .post('/api/chat/users/1/status')
        .set({ ...BROWSER_HEADERS, 'Accept-Encoding': encoding, 'X-Request-Id': 'big-problem' })
        .send(body)
        .buffer(true)
        .parse((res, done) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => done(null, Buffer.concat(chunks)));
        });
    const identity = await send('identity');
    const br = await send('br');
    expect(identity.status).toBe(400);
    expect(identity.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(Number(identity.headers['content-length'])).toBeGreaterThan(1024);
    expect(br.status).toBe(400);
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers['vary']).toContain('Accept-Encoding');
    // supertest decodes br itself: what it read is the identity body, byte for byte.
    expect((br.body as Buffer).equals(identity.body as Buffer)).toBe(true);
    expect(Number(br.headers['content-length'])).toBeLessThan(
      Number(identity.headers['content-length']),
    );
  });

  it('when a problem body is over the threshold, then it is compressed, its request id and all', async () => {
    const gw = await upstreams.gateway({ env: { COMPRESSION_MIN_BYTES: '64' } });
    const codings = await expectCodings(
      gw.app,
      '/api/nothing',
      { Accept: 'application/json', 'X-Request-Id': 'nothing-1' },
      404,
    );
    expect(codings.identity.headers['content-type']).toBe(
      'application/problem+json; charset=utf-8',
    );
  });

  it('when /metrics is asked compressed, then it decodes to Prometheus text of the same series', async () => {
    const gw = await upstreams.gateway();
    const identity = await get(gw.app, '/metrics', 'identity');
    for (const encoding of ['br', 'gzip']) {
      const res = await get(gw.app, '/metrics', encoding);
      expect(res.status).toBe(200);
      expect(res.headers['content-encoding']).toBe(encoding);
      expect(Number(res.headers['content-length'])).toBe(res.bytes.length);
      expect(varyOf(res)).toContain('Accept-Encoding');
      // The samples move between two scrapes; the series described do not.
      const described = (text: string) => text.split('\n').filter((l) => l.startsWith('# '));
      expect(described(decode(res).toString('utf8'))).toEqual(
        described(identity.bytes.toString('utf8')),
      );
    }
  });

  it('when /openapi.json is asked in each coding, then each decodes to exactly the identity bytes with its own ETag', async () => {
    const gw = await upstreams.gateway();
    const codings = await expectCodings(gw.app, '/openapi.json');
    expectEtags(codings);
    const again = await get(gw.app, '/openapi.json', 'br', {
      'If-None-Match': codings.br.headers['etag'] as string,
    });
    expect(again.status).toBe(304);
    expect(again.headers['content-encoding']).toBeUndefined();
  });

  it("when the docs page's assets are asked, then its text files are compressed and the icon is not", async () => {
    const gw = await upstreams.gateway();
    for (const path of ['/docs/swagger-ui.css', '/docs/swagger-ui-bundle.js']) {
      const codings = await expectCodings(gw.app, path);
      expectEtags(codings);
      expect(codings.br.headers['cache-control']).toBe('public, max-age=86400');
    }
    const icon = await get(gw.app, '/docs/favicon-32x32.png', 'br');
    expect(icon.status).toBe(200);
    expect(icon.headers['content-encoding']).toBeUndefined();
  });
});

describe('the demo page from STATIC_DIR', () => {
  const site = () => upstreams.gateway({ env: { STATIC_DIR: DEMO_PAGE } });

  it('when its files are asked in each coding, then each decodes to exactly the file with its own ETag', async () => {
    const gw = await site();
    for (const path of ['/', '/index.html', '/app.js', '/styles.css']) {
      const codings = await expectCodings(gw.app, path, { Accept: 'text/html' });
      expectEtags(codings);
    }
    const page = await get(gw.app, '/', 'br', { Accept: 'text/html' });
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['cache-control']).toBe('no-cache');
  });

  it('when a client-side route is reloaded, then index.html comes compressed', async () => {
    const gw = await site();
    const index = await get(gw.app, '/index.html', 'identity');
    const route = await get(gw.app, '/some/client/route', 'gzip', { Accept: 'text/html' });
    expect(route.status).toBe(200);
    expect(route.headers['content-encoding']).toBe('gzip');
    expect(decode(route).equals(index.bytes)).toBe(true);
  });

  it('when a file is under the threshold, then it comes from the directory as it is', async () => {
    const gw = await site();
    const icon = await get(gw.app, '/favicon.svg', 'br');
    expect(icon.status).toBe(200);
    expect(icon.headers['content-encoding']).toBeUndefined();
    expect(varyOf(icon)).not.toContain('Accept-Encoding');
  });

  it('when a file is asked with HEAD, then it carries the headers its GET would', async () => {
    const gw = await site();
    const whole = await get(gw.app, '/app.js', 'br');
    const headOnly = await get(gw.app, '/app.js', 'br', {}, 'HEAD');
    expect(headOnly.bytes.length).toBe(0);
    for (const name of ['content-encoding', 'content-length', 'etag']) {
      expect(headOnly.headers[name], name).toBe(whole.headers[name]);
    }
  });
});

describe('answers never compressed', () => {
  it('when the answer is a 204, then it carries no coding', async () => {
    const gw = await upstreams.serviceGateway('administrator', { COMPRESSION_MIN_BYTES: '0' });
    const res = await request(gw.app)
      .post('/api/chat/users/4/status')
      .set({ ...BROWSER_HEADERS, 'Accept-Encoding': 'br' })
      .send({ status_text: 'on a call' });
    expect(res.status).toBe(204);
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.headers['vary'] ?? '').not.toContain('Accept-Encoding');
  });

  it('when the answer is a redirect, then it carries no coding', async () => {
    const gw = await upstreams.gateway({ env: { COMPRESSION_MIN_BYTES: '0' } });
    const res = await get(gw.app, '/api/search/url?u=https%3A%2F%2Fshop.example%2F&rp=1', 'br');
    expect(res.status).toBe(302);
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.headers['vary'] ?? '').not.toContain('Accept-Encoding');
  });

  it('when a body says Cache-Control: no-transform, or is an event stream, then it is sent as it is', async () => {
    const app = express();
    compressSentBodies(app.response);
    const stage = createCompressionStage({ minBytes: 16 });
    app.use((req, res, next) => stage(req, res, next));
    const big = { text: 'x'.repeat(4096) };
    app.get('/kept', (_req, res) => {
      res.set('Cache-Control', 'no-store, no-transform').json(big);
    });
    app.get('/stream', (_req, res) => {
      res.type('text/event-stream').send(`data: ${'x'.repeat(4096)}\n\n`);
    });
    app.get('/coded', (_req, res) => {
      res.json(big);
    });
    const kept = await get(app, '/kept', 'br');
    expect(kept.headers['content-encoding']).toBeUndefined();
    expect(kept.headers['vary']).toBeUndefined();
    expect(JSON.parse(kept.body)).toEqual(big);
    const stream = await get(app, '/stream', 'br');
    expect(stream.headers['content-encoding']).toBeUndefined();
    // The same app codes what the contract lets it code.
    const coded = await get(app, '/coded', 'br');
    expect(coded.headers['content-encoding']).toBe('br');
    expect(JSON.parse(decode(coded).toString('utf8'))).toEqual(big);
  });
});

describe('COMPRESSION=off', () => {
  it('when compression is off, then every answer is what it was: identity, one ETag, no Vary on Accept-Encoding', async () => {
    const off = await upstreams.gateway({
      env: { COMPRESSION: 'off', STATIC_DIR: DEMO_PAGE },
    });
    const reference = await get(off.app, SEARCH, undefined, { Origin: APP_ORIGIN });
    expect(reference.headers['etag']).toBe(`"${sha256(reference.bytes)}"`);
    for (const encoding of [undefined, 'identity', 'br', 'gzip', '*']) {
      const res = await get(off.app, SEARCH, encoding, { Origin: APP_ORIGIN });
      expect(res.headers['content-encoding']).toBeUndefined();
      expect(res.headers['vary']).toBe('Origin, Accept');
      expect(res.headers['etag']).toBe(reference.headers['etag']);
      expect(res.bytes.equals(reference.bytes)).toBe(true);
      expect(Number(res.headers['content-length'])).toBe(reference.bytes.length);
    }
    for (const path of ['/openapi.json', '/metrics', '/app.js', '/docs/swagger-ui.css']) {
      const res = await get(off.app, path, 'br');
      expect(res.status, path).toBe(200);
      expect(res.headers['content-encoding'], path).toBeUndefined();
      expect(varyOf(res), path).not.toContain('Accept-Encoding');
    }
    // Files come from the directory as before: express.static's own weak validator.
    const file = await get(off.app, '/app.js', 'br');
    expect(file.headers['etag']).toMatch(/^W\//);
    expect(file.headers['last-modified']).toBeDefined();
  });

  it('when compression is off, then a stored entry holds no compressed bodies and no compression runs', async () => {
    const brotli = vi.spyOn(zlib, 'brotliCompressSync');
    const gzip = vi.spyOn(zlib, 'gzipSync');
    const gw = await upstreams.gateway({ cache: 'redis', env: { COMPRESSION: 'off' } });
    await get(gw.app, SEARCH, 'br');
    await gw.loader.settled();
    const hit = await get(gw.app, SEARCH, 'br');
    expect(hit.headers['x-cache']).toBe('HIT');
    expect(brotli).not.toHaveBeenCalled();
    expect(gzip).not.toHaveBeenCalled();
  });
});

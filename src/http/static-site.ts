import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import express, { type RequestHandler, type Response } from 'express';
import { ConfigError } from '../../config/load-config.js';
import { createClientModule } from './client-module.js';
import type { CompressionPolicy } from './compression.js';
import { sendEncoded } from './send-encoded.js';
import { holdTextFiles } from './text-files.js';

/** Fingerprinted file names (`app.3f9a1c2b.js`): their bytes never change under that name. */
const FINGERPRINTED = /\.[0-9a-f]{8,}\.[a-z0-9]+$/i;

/**
 * The policy a served page needs and nothing more: scripts, styles, fonts and API calls from
 * the gateway's own origin only; images also from the image host (`imgSrc`); no plugins, no
 * framing, no inline script. Plain HTTP stays plain (no upgrade-insecure-requests), so the
 * same page works behind TLS and on a developer's loopback.
 */
function pagePolicy(imgSrc: string): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src ${imgSrc}`,
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * STATIC_DIR (contract section 1): a built frontend served at `/` from the gateway's own origin,
 * so its session cookie is same-site. Fingerprinted assets are cached `immutable`; everything
 * else is revalidated (`no-cache`, with ETags). A GET outside `/api` that accepts HTML and
 * matches no file gets `index.html`, so client-side routes survive a reload.
 *
 * With COMPRESSION=on, the text files big enough to compress are read and compressed once, at
 * start-up (text-files.ts), and served from memory with a strong ETag per coding (contract
 * section 4); everything else is served from the directory as it is.
 *
 * Beside the site's files, `/vendor/openapi-fetch.mjs` is the typed client's ES module
 * (client-module.ts), for a page without a build step; a file of the site's own at that path
 * comes first.
 */
export function createStaticSite(options: {
  dir: string;
  imgSrc: string;
  compression?: CompressionPolicy;
}): RequestHandler[] {
  const root = resolve(options.dir);
  const index = join(root, 'index.html');
  if (!existsSync(index)) throw new ConfigError([`STATIC_DIR has no index.html (${root})`]);
  const policy = pagePolicy(options.imgSrc);
  const headersFor = (res: Response, path: string) => {
    res.setHeader(
      'Cache-Control',
      FINGERPRINTED.test(path) ? 'public, max-age=31536000, immutable' : 'no-cache',
    );
    if (path.endsWith('.html')) res.setHeader('Content-Security-Policy', policy);
  };
  const held = options.compression ? holdTextFiles(root, options.compression.minBytes) : undefined;
  const fromMemory: RequestHandler = (req, res, next) => {
    const file = req.method === 'GET' || req.method === 'HEAD' ? held?.get(req.path) : undefined;
    if (file === undefined) {
      next();
      return;
    }
    headersFor(res, file.path);
    sendEncoded(req, res, file);
  };
  const files = express.static(root, {
    index: 'index.html',
    dotfiles: 'ignore',
    redirect: false,
    setHeaders: headersFor,
  });
  const fallback: RequestHandler = (req, res, next) => {
    const page = (req.method === 'GET' || req.method === 'HEAD') && !req.path.startsWith('/api');
    if (!page || req.accepts(['json', 'html']) !== 'html') {
      next();
      return;
    }
    headersFor(res, index);
    const heldIndex = held?.get('/');
    if (heldIndex !== undefined) {
      sendEncoded(req, res, heldIndex);
      return;
    }
    res.sendFile(index, { etag: true, lastModified: true, cacheControl: false });
  };
  const client = createClientModule();
  return held === undefined ? [files, client, fallback] : [fromMemory, files, client, fallback];
}

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { RequestHandler } from 'express';
import { sendEncoded, toEncodable } from './send-encoded.js';

/** Where a served page imports the typed client from (simulators/demo-page/client.js). */
export const CLIENT_MODULE_PATH = '/vendor/openapi-fetch.mjs';

/**
 * openapi-fetch's ES module (a production dependency: it ships in the image with the gateway),
 * served from the gateway's own origin for pages written as plain ES modules, such as the demo.
 * Such a page can reach it no other way: its CSP allows scripts from this origin only, and rules
 * out the inline import map a bare `openapi-fetch` specifier would need. The file is read once,
 * at start-up (a missing package fails the start, not a page); it is not fingerprinted, so it
 * is revalidated like the site's other such files: an upgraded package reaches pages at once.
 * Compression and the ETag are the held files' (send-encoded.ts).
 */
export function createClientModule(): RequestHandler {
  const path = createRequire(import.meta.url).resolve('openapi-fetch/dist/index.mjs');
  const file = toEncodable(readFileSync(path), 'text/javascript; charset=utf-8');
  return (req, res, next) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || req.path !== CLIENT_MODULE_PATH) {
      next();
      return;
    }
    res.setHeader('Cache-Control', 'no-cache');
    sendEncoded(req, res, file);
  };
}

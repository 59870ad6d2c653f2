import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Router } from 'express';
import { createRequire } from 'node:module';
import { DOCS_ASSET_ROUTE, DOCS_ROUTE, OPENAPI_ROUTE } from './ops-routes.js';
import { mountRoute } from './route-mounter.js';
import { expressPath } from './route-spec.js';
import { sendEncoded, toEncodable, type EncodableRepresentation } from './send-encoded.js';

/** The documentation page: assets from the gateway itself, styles inline as Swagger UI needs. */
const DOCS_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>BFF gateway API</title>
    <link rel="stylesheet" href="/docs/swagger-ui.css" />
    <link rel="icon" href="/docs/favicon-32x32.png" />
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="/docs/swagger-ui-bundle.js"></script>
    <script src="/docs/docs.js"></script>
  </body>
</html>
`;

/** Swagger UI pointed at this gateway's own description: a file, since no inline script runs. */
const INIT = `window.addEventListener('load', () => {
  window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', validatorUrl: 'none' });
});
`;

/** The only files of swagger-ui-dist the page loads. */
const ASSETS = new Set(['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png']);

/** Those of them that are text, with the media types express's sendFile gives them. */
const TEXT_ASSETS: Readonly<Record<string, string>> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
};

/**
 * Where swagger-ui-dist's files are. Its main module is not imported: it would load the 1.5 MB
 * browser bundle into the gateway's heap (+40 MB RSS measured) just to say where it lies.
 */
function swaggerUiDirectory(): string {
  const require = createRequire(import.meta.url);
  return dirname(require.resolve('swagger-ui-dist/absolute-path.js'));
}

/**
 * `GET /openapi.json` (the document, made and serialised on its first request: most gateways
 * never serve it) and `GET /docs` (contract section 2):
 * Swagger UI rendering it, with every asset served by the gateway itself, no CDN. The document
 * is compressed once, on its first compressed request, and Swagger UI's text files likewise
 * (contract section 4): they never change while the gateway runs. They are read on their first
 * request, not at start-up: most gateways never serve /docs, and its bundle is 1.7 MB.
 */
export function createDocsRouter(describe: () => object): Router {
  let openapi: EncodableRepresentation | undefined;
  const document = () =>
    (openapi ??= toEncodable(
      Buffer.from(JSON.stringify(describe()), 'utf8'),
      'application/json; charset=utf-8',
    ));
  const dist = swaggerUiDirectory();
  const held = new Map<string, Promise<EncodableRepresentation>>();
  const textAsset = (name: string, contentType: string) => {
    let asset = held.get(name);
    if (asset === undefined) {
      asset = readFile(join(dist, name)).then((body) => toEncodable(body, contentType));
      // A failed read is tried again by the next request.
      asset.catch(() => held.delete(name));
      held.set(name, asset);
    }
    return asset;
  };
  const router = Router();
  mountRoute(router, OPENAPI_ROUTE, (req, res) => {
    res.setHeader('Cache-Control', 'no-cache');
    sendEncoded(req, res, document());
  });
  mountRoute(router, DOCS_ROUTE, (_req, res) => {
    res
      .set({ 'Content-Security-Policy': DOCS_POLICY, 'Cache-Control': 'no-cache' })
      .type('html')
      .send(PAGE);
  });
  router.get('/docs/docs.js', (_req, res) => {
    res.set('Cache-Control', 'no-cache').type('text/javascript').send(INIT);
  });
  router.get(expressPath(DOCS_ASSET_ROUTE.path), async (req, res, next) => {
    const name = req.params['asset'];
    if (typeof name !== 'string' || !ASSETS.has(name)) {
      next();
      return;
    }
    const contentType = TEXT_ASSETS[name];
    // With COMPRESSION=off, or for the icon, the file goes out from disk as it is.
    if (req.compression === undefined || contentType === undefined) {
      res.sendFile(join(dist, name), { maxAge: '1d' });
      return;
    }
    const asset = await textAsset(name, contentType);
    res.setHeader('Cache-Control', 'public, max-age=86400');
    sendEncoded(req, res, asset);
  });
  return router;
}

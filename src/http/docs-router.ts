import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { Router } from 'express';
import { createRequire } from 'node:module';
import { methodNotAllowed } from './error-handler.js';

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

/**
 * Where swagger-ui-dist's files are. Its main module is not imported: it would load the 1.5 MB
 * browser bundle into the gateway's heap (+40 MB RSS measured) just to say where it lies.
 */
function swaggerUiDirectory(): string {
  const require = createRequire(import.meta.url);
  return dirname(require.resolve('swagger-ui-dist/absolute-path.js'));
}

/**
 * `GET /openapi.json` (the document, serialised once) and `GET /docs` (contract section 2):
 * Swagger UI rendering it, with every asset served by the gateway itself, no CDN.
 */
export function createDocsRouter(document: object): Router {
  const text = JSON.stringify(document);
  const etag = `"${createHash('sha256').update(text).digest('base64url')}"`;
  const dist = swaggerUiDirectory();
  const router = Router();
  router
    .route('/openapi.json')
    .get((_req, res) => {
      res.set({ ETag: etag, 'Cache-Control': 'no-cache' }).type('application/json').send(text);
    })
    .all(methodNotAllowed(['GET']));
  router
    .route('/docs')
    .get((_req, res) => {
      res
        .set({ 'Content-Security-Policy': DOCS_POLICY, 'Cache-Control': 'no-cache' })
        .type('html')
        .send(PAGE);
    })
    .all(methodNotAllowed(['GET']));
  router.get('/docs/docs.js', (_req, res) => {
    res.set('Cache-Control', 'no-cache').type('text/javascript').send(INIT);
  });
  router.get('/docs/:asset', (req, res, next) => {
    if (!ASSETS.has(req.params.asset)) {
      next();
      return;
    }
    res.sendFile(join(dist, req.params.asset), { maxAge: '1d' });
  });
  return router;
}

// @ts-check
// The page's one way to the gateway: openapi-fetch, typed by the paths generated from
// GET /openapi.json (types/gateway-api.d.ts, `npm run api:types`). The gateway serves the
// client's ES module itself, so the page loads nothing from another origin.

import createClient from './vendor/openapi-fetch.mjs';

/**
 * @import { Client, Middleware } from './vendor/openapi-fetch.mjs'
 * @import { paths } from './types/gateway-api.js'
 */

/** Methods that change nothing: every other one needs the anti-forgery header. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Unsafe requests carry the header the gateway's CSRF guard asks for (docs/frontend.md,
 * Cross-site protection): a page on another site cannot send it without a preflight.
 * @type {Middleware}
 */
const antiForgery = {
  onRequest({ request }) {
    if (!SAFE_METHODS.has(request.method)) request.headers.set('X-CSRF', '1');
    return undefined;
  },
};

/**
 * Same origin, so the session cookie goes along; JSON asked for by name (search would also
 * answer LD-JSON). A failed call's `error` is the problem object the gateway answered.
 * @type {Client<paths>}
 */
export const api = createClient({
  baseUrl: '/',
  credentials: 'same-origin',
  headers: { Accept: 'application/json' },
});
api.use(antiForgery);

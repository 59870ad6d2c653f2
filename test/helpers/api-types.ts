import { fileURLToPath } from 'node:url';
import openapiTS, { COMMENT_HEADER, astToString } from 'openapi-typescript';
import { loadConfig } from '../../config/load-config.js';
import { ROUTE_TABLE } from '../../src/features/route-table.js';
import { createOpenApiDocument, openApiOptions } from '../../src/openapi/openapi-document.js';

/**
 * The demo page's generated API types (issue 33): what `npm run api:types` writes and what
 * test/static/api-types.test.ts holds against today's document.
 */
export const API_TYPES_FILE = fileURLToPath(
  new URL('../../simulators/demo-page/types/gateway-api.d.ts', import.meta.url),
);

/**
 * What a gateway with its default settings in session mode serves at GET /openapi.json: the
 * superset, since the page logs in. Built the way the gateway builds it (parts.ts), from a
 * configuration that sets only the variables start-up requires.
 */
export function sessionModeDocument(): object {
  const config = loadConfig(
    {
      CHAT_BASE_URL: 'http://chat.invalid',
      SEARCH_BASE_URL: 'http://search.invalid',
      SEARCH_CLIENT_TOKEN: 'unused',
      CHAT_AUTH_MODE: 'session',
    },
    ROUTE_TABLE,
  );
  return createOpenApiDocument(openApiOptions(config));
}

/**
 * The types openapi-typescript makes of a document: what its CLI writes with no flags (the
 * header, then the printed AST), so the committed file is the generator's output byte for byte.
 */
export async function generateApiTypes(document: object): Promise<string> {
  // The document as the gateway sends it: JSON text (docs-router.ts serialises it the same way).
  return `${COMMENT_HEADER}${astToString(await openapiTS(JSON.stringify(document)))}`;
}

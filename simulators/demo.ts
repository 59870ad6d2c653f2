import { fileURLToPath } from 'node:url';
import { loadConfig } from '../config/load-config.js';
import { ROUTE_TABLE } from '../src/features/route-table.js';
import { createGateway } from '../src/composition/gateway.js';
import { createLogger } from '../src/logging/create-logger.js';
import { DEMO_USERS } from './demo-users.js';
import { startSimulators } from './start-simulators.js';

/**
 * `npm run demo`: the gateway doing its main job on a fresh machine, with built-in simulated
 * upstreams on loopback, the in-process cache, and the demo page at `/`. An entry point like
 * main.ts; any variable set in the environment still wins over the demo's defaults, so
 * `CHAT_AUTH_MODE=session npm run demo` runs the same page with a login.
 */
async function demo(): Promise<void> {
  const clientToken = 'demo-search-token';
  const sims = await startSimulators({ clientToken });
  const { searchOrigin, chatOrigin, imageOrigin } = sims;
  const admin = sims.chat.credentials('administrator');
  // From dist/simulators/ or simulators/: the page's source folder is served as it is.
  const page = fileURLToPath(new URL('../../simulators/demo-page/', import.meta.url));

  // Service mode by default: the demo acts as the simulated organization's administrator, so
  // the page works at once without a login step.
  const config = loadConfig(
    {
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      SEARCH_BASE_URL: searchOrigin,
      SEARCH_CLIENT_TOKEN: clientToken,
      SEARCH_LINKS: 'gateway',
      CHAT_BASE_URL: chatOrigin,
      CHAT_AUTH_MODE: 'service',
      CHAT_EMAIL: admin.email,
      CHAT_API_KEY: admin.apiKey,
      STATIC_DIR: page,
      STATIC_IMG_SRC: `'self' data: ${imageOrigin}`,
      // A frontend dev server on another port of this machine may call the gateway too.
      CORS_ORIGINS: 'http://localhost:5173,http://127.0.0.1:5173',
      // Plain HTTP on loopback: the session cookie cannot be Secure here.
      SESSION_COOKIE_SECURE: 'false',
      ...process.env,
    },
    ROUTE_TABLE,
  );
  const logger = createLogger({ level: config.logLevel, secrets: config.secrets });
  const gateway = createGateway({ config, logger });
  await gateway.start();

  const base = gateway.url;
  const session = config.chat.authMode === 'session';
  process.stdout.write(
    [
      '',
      `BFF gateway (demo) listening on ${base}  — open it in a browser for the demo page`,
      `  simulated search service: ${searchOrigin}   chat service: ${chatOrigin}   images: ${imageOrigin}`,
      session
        ? `  session mode: log in on the page as one of\n${DEMO_USERS.map((u) => `    ${u.email} / ${u.password}  (${u.role})`).join('\n')}`
        : '  service mode: every chat call acts as the simulated organization administrator',
      '',
      'Try:',
      `  curl '${base}/api/search?q=wireless+headphones&k=5&sort=price_asc'`,
      `  curl -H 'Accept: application/ld+json' '${base}/api/search?q=coffee&k=3'`,
      `  curl -i '${base}/api/search?q=laptop&k=0'          # a validation error envelope`,
      `  curl '${base}/api/bootstrap'`,
      `  curl '${base}/api/chat/channel-folders?include_archived=true'`,
      `  curl -X DELETE -H 'X-CSRF: 1' -H 'Sec-Fetch-Site: same-origin' '${base}/api/chat/emoji/party'   # 404 envelope`,
      `  curl '${base}/readyz'`,
      '',
      'Ctrl-C stops it.',
      '',
    ].join('\n'),
  );

  const stop = () => {
    void gateway.stop().then(async (clean) => {
      await sims.close();
      process.exit(clean ? 0 : 1);
    });
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

await demo();

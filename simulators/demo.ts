import { loadConfig } from '../config/load-config.js';
import { createGateway } from '../src/gateway.js';
import { createLogger } from '../src/logging/create-logger.js';
import { startSimulators } from './start-simulators.js';

/**
 * `npm run demo`: the gateway doing its main job on a fresh machine, with built-in simulated
 * upstreams on loopback and the in-process cache. An entry point like main.ts; any variable
 * set in the environment still wins over the demo's defaults.
 */
async function demo(): Promise<void> {
  const clientToken = 'demo-search-token';
  const sims = await startSimulators({ clientToken });
  const { searchOrigin, chatOrigin } = sims;
  const admin = sims.chat.credentials('administrator');

  // Service mode: the demo acts as the simulated organization's administrator, so the chat
  // routes answer without a login step.
  const config = loadConfig({
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    SEARCH_BASE_URL: searchOrigin,
    SEARCH_CLIENT_TOKEN: clientToken,
    CHAT_BASE_URL: chatOrigin,
    CHAT_AUTH_MODE: 'service',
    CHAT_EMAIL: admin.email,
    CHAT_API_KEY: admin.apiKey,
    ...process.env,
  });
  const logger = createLogger({ level: config.logLevel });
  const gateway = createGateway(config, { logger });
  await gateway.start();

  const base = gateway.url;
  process.stdout.write(
    [
      '',
      `BFF gateway (demo) listening on ${base}`,
      `  simulated search service: ${searchOrigin}   simulated chat service: ${chatOrigin}`,
      '',
      'Try:',
      `  curl '${base}/api/search?q=wireless+headphones&k=5&sort=price_asc'`,
      `  curl -H 'Accept: application/ld+json' '${base}/api/search?q=coffee&k=3'`,
      `  curl -i '${base}/api/search?q=laptop&k=0'          # a validation error envelope`,
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

import { ConfigError, loadConfig } from '../config/load-config.js';
import { createGateway } from './gateway.js';
import { createLogger } from './logging/create-logger.js';

/** Composition root: the only module that reads process.env. */
async function main(): Promise<void> {
  let config;
  let logger;
  let gateway;
  try {
    config = loadConfig(process.env);
    logger = createLogger({ level: config.logLevel });
    gateway = createGateway(config, { logger });
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(78); // EX_CONFIG: a deployment mistake, not a crash.
    }
    throw error;
  }
  // Signals are handled before anything is announced: a supervisor that stops the gateway the
  // moment it is ready must get a graceful stop, never the default kill.
  let stopping = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'draining');
    void gateway.stop().then((clean) => {
      logger.info({ clean }, 'stopped');
      process.exit(clean ? 0 : 1);
    });
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);

  await gateway.start();
  logger.info({ url: gateway.url }, 'gateway listening');
  // A parent with an IPC channel (a supervisor, the fault tests) learns it is up as an event.
  process.send?.({ event: 'listening', url: gateway.url });
}

await main();

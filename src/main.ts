import { describeConfig } from '../config/describe-config.js';
import { ConfigError, loadConfig, type Config } from '../config/load-config.js';
import { ROUTE_TABLE } from './features/route-table.js';
import { createLogger } from './logging/create-logger.js';
import { startTracing } from './observability/tracing.js';

/** Composition root: the only module that reads process.env. */
async function main(): Promise<void> {
  let config: Config;
  try {
    // `--check-config` (npm run config:check): validate, show the effective values, stop.
    if (process.argv.includes('--check-config')) {
      process.stdout.write(describeConfig(process.env, ROUTE_TABLE));
      return;
    }
    config = loadConfig(process.env, ROUTE_TABLE);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(78); // EX_CONFIG: a deployment mistake, not a crash.
    }
    throw error;
  }
  const logger = createLogger({ level: config.logLevel, secrets: config.secrets });
  // Tracing starts before the gateway's modules load, so its hooks see express and ioredis
  // being imported; with no OTLP endpoint nothing of the SDK is loaded.
  const tracing = await startTracing(config.tracing, logger);
  const { createGateway } = await import('./composition/gateway.js');
  const gateway = createGateway({ config, logger });

  // Signals are handled before anything is announced: a supervisor that stops the gateway the
  // moment it is ready must get a graceful stop, never the default kill.
  let stopping = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'draining');
    void gateway.stop().then(async (clean) => {
      await tracing?.shutdown();
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

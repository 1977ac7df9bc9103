// First: instrumentation must be in place before the modules it traces load.
import { tracing } from './tracing';
import { ConfigError, loadConfig } from '@booking/config';
import { createLogger } from '@booking/logging';
import { startDispatcher } from './dispatcher';

async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    console.error(error instanceof ConfigError ? error.message : error);
    process.exit(1);
  }
  const logger = createLogger(config.logLevel, 'dispatcher');
  const dispatcher = await startDispatcher(config, logger);

  let stopping = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), config.shutdownGraceMs + config.webhooks.timeoutMs).unref();
    dispatcher
      .stop()
      .catch((error: unknown) => logger.warn({ err: error }, 'unclean shutdown'))
      // Spans of the last attempts are exported last.
      .then(() => tracing.shutdown())
      .finally(() => {
        clearTimeout(force);
        process.exit(0);
      });
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});

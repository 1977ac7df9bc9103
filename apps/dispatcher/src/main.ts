import { ConfigError, loadConfig, type Config } from '@booking/config';
import { createRedis } from '@booking/db';
import pino from 'pino';

/**
 * The webhook dispatcher. Webhook delivery is not built yet, so for now it only checks that it
 * can run (settings valid, Redis reachable) and then waits for a stop signal.
 */
async function main() {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }

  const logger = pino({ level: config.logLevel, base: { service: 'dispatcher' } });
  const redis = createRedis(config.redisUrl);
  // Without a listener ioredis prints every failed reconnect as an "Unhandled error event".
  redis.on('error', (error: Error) => logger.warn({ err: error }, 'Redis connection error'));
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    logger.fatal({ err: error }, `cannot reach Redis at ${new URL(config.redisUrl).host}`);
    redis.disconnect();
    process.exit(1);
  }
  logger.info('connected to Redis; idle because webhook delivery is not built yet');

  let stopping = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    redis
      .quit()
      .catch((error: unknown) => logger.warn({ err: error }, 'could not close Redis cleanly'))
      .finally(() => process.exit(0));
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});

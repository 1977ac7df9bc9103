// The outbox relay alone, as its own OS process, for tests that must see whether a failure ends
// the process (an unhandled rejection does, under Node's default --unhandled-rejections=throw;
// inside Jest it would not). Settings come from the environment as the dispatcher's do; errors
// are logged as JSON lines on stdout. SIGTERM stops the relay, which waits for its drain, then
// the process exits 0.
import { loadConfig } from '@booking/config';
import { createPgPool } from '@booking/db';
import { createDeliveryQueue, queueConnection } from '@booking/webhook-queue';
import pino from 'pino';
import { startOutboxRelay } from '../../src/relay/outbox-relay';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = pino({ level: 'warn' });
  const connection = queueConnection(config.redisUrl);
  const queue = createDeliveryQueue(connection, config.queuePrefix);
  const sql = createPgPool(config.databaseUrl, { poolSize: config.dbPoolSize, ...config.dbTimeouts });
  const stop = startOutboxRelay({
    sql,
    queue,
    retryDelaysMs: config.webhooks.retryDelaysMs,
    intervalMs: config.webhooks.relayIntervalMs,
    logger,
  });
  process.once('SIGTERM', () => {
    void (async () => {
      await stop();
      await queue.close();
      await Promise.allSettled([sql.end(), connection.quit()]);
      process.exit(0);
    })();
  });
}

void main();

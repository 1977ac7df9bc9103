import { randomUUID } from 'node:crypto';
import { loadConfig } from '@booking/config';
import { createPgPool } from '@booking/db';
import { freePort, sleep } from '@booking/test-kit';
import { createDeliveryQueue, queueConnection } from '@booking/webhook-queue';
import pino from 'pino';
import { startOutboxRelay } from '../src/relay/outbox-relay';

// The relay polls every 50 ms by default. While PostgreSQL is unreachable (here: a port on
// 127.0.0.1 where nothing listens, so every connection is refused at once) a failed drain pauses
// the polls for a second, so an outage is logged about once a second rather than once per poll.

describe('the outbox relay while PostgreSQL is unreachable', () => {
  it('when every drain fails, then polls pause a second after each failure and the failures are logged about once a second', async () => {
    const port = await freePort();
    const sql = createPgPool(`postgresql://postgres@127.0.0.1:${port}/nowhere`, {
      poolSize: 2,
      connectTimeoutMs: 1_000,
    });
    const connection = queueConnection(loadConfig().redisUrl);
    const queue = createDeliveryQueue(connection, `relay-pause-${randomUUID()}`);
    const failures: number[] = [];
    const logger = pino(
      { level: 'error' },
      { write: (line: string) => void (line.includes('outbox relay failed') && failures.push(Date.now())) },
    );
    const started = Date.now();
    const stop = startOutboxRelay({ sql, queue, retryDelaysMs: [0], intervalMs: 50, logger });
    try {
      await sleep(2_600);
    } finally {
      await stop();
    }
    const seconds = (Date.now() - started) / 1000;
    try {
      // Unpaused, 50 ms polls would have logged about 50 failures.
      expect(failures.length).toBeGreaterThanOrEqual(2);
      expect(failures.length).toBeLessThanOrEqual(Math.ceil(seconds) + 1);
      for (let i = 1; i < failures.length; i += 1) expect(failures[i]! - failures[i - 1]!).toBeGreaterThanOrEqual(950);
    } finally {
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
      await Promise.allSettled([sql.end(), connection.quit()]);
    }
  });
});

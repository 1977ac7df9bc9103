import { randomBytes, randomUUID } from 'node:crypto';
import { createPgPool } from '@booking/db';
import { generateWebhookSecret, sealSecret } from '@booking/signing';
import { createIsolatedDatabase, createTestApp, seedTenant, waitUntil, type TestApp } from '@booking/test-kit';
import { createDeliveryQueue, queueConnection } from '@booking/webhook-queue';
import pino from 'pino';
import { startOutboxRelay } from '../src/relay/outbox-relay';

// A tenant with many endpoints makes a full relay batch (1,000 events) a statement of 100,000
// delivery rows, past a 300 ms statement timeout here (5 s by default, which a bigger fan-out
// reaches the same way). The relay must still relay every event, in smaller batches, rather than
// claim and roll back the same oldest events for good. Real PostgreSQL (a database of its own)
// and Redis (a queue prefix of its own). All endpoints but one are disabled, so their deliveries
// are written (the statement's work) but wait rather than queue: the test measures the statement,
// not 100,000 queued jobs, which on a loaded CI machine took longer than the test's minute.

const ENDPOINTS = 100;
const EVENTS = 1_000;

describe('the outbox relay and a batch too big for the statement timeout', () => {
  let isolated: Awaited<ReturnType<typeof createIsolatedDatabase>>;
  let t: TestApp;

  beforeAll(async () => {
    isolated = await createIsolatedDatabase();
    t = createTestApp(isolated.env);
  });
  afterAll(async () => {
    await t.close();
    await isolated.drop();
  });

  it('when a full batch runs out of time, then every event is still relayed, in smaller batches', async () => {
    const tenantId = (await seedTenant(t.deps)).tenant.id;
    const secretKey = randomBytes(32).toString('hex');
    await t.deps.db.webhookEndpoint.createMany({
      data: Array.from({ length: ENDPOINTS }, (_, i) => ({
        tenantId,
        url: `https://hooks.example.com/${i}`,
        events: [],
        ...(i === 0 ? {} : { status: 'disabled' as const, disabledAt: new Date() }),
        secretCiphertext: sealSecret(secretKey, generateWebhookSecret()),
      })),
    });
    await t.deps.db.event.createMany({
      data: Array.from({ length: EVENTS }, () => {
        const entityId = randomUUID();
        return {
          tenantId,
          name: 'booking.cancelled',
          entityType: 'booking',
          entityId,
          schemaVersion: 1,
          data: { booking_id: entityId },
        };
      }),
    });
    const sql = createPgPool(isolated.env.DATABASE_URL!, { poolSize: 3, statementTimeoutMs: 300 });
    const connection = queueConnection(t.deps.config.redisUrl);
    const queue = createDeliveryQueue(connection, `relay-size-${randomUUID()}`);
    const logs: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => logs.push(line) });
    const stop = startOutboxRelay({
      sql,
      queue,
      retryDelaysMs: [0],
      intervalMs: 200,
      logger,
    });
    try {
      await waitUntil(async () => (await t.deps.db.event.count({ where: { relayedAt: null } })) === 0, {
        timeoutMs: 60_000,
        intervalMs: 250,
        what: 'every event relayed',
      });

      expect(await t.deps.db.webhookDelivery.count()).toBe(ENDPOINTS * EVENTS);
      expect(await t.deps.db.webhookDelivery.count({ where: { status: 'pending' } })).toBe(EVENTS);
      await waitUntil(async () => (await queue.getJobCountByTypes('waiting', 'delayed', 'prioritized')) === EVENTS, {
        timeoutMs: 30_000,
        intervalMs: 250,
        what: 'one job per pending delivery',
      });
      expect(logs.some((line) => line.includes('relaying smaller batches'))).toBe(true);
    } finally {
      await stop();
      await queue.obliterate({ force: true });
      await queue.close();
      await Promise.allSettled([sql.end(), connection.quit()]);
    }
  }, 90_000);
});

import { randomUUID } from 'node:crypto';
import { OUTBOX_CHANNEL, recordEvent } from '@booking/events';
import { seedTenant, waitUntil } from '@booking/test-kit';
import { startHarness, type WebhookHarness } from './support/webhook-harness';

// The relay's polling is set to a minute here, so an event relayed within seconds was relayed
// because PostgreSQL notified the relay's LISTEN connection.

describe('the outbox relay listening for committed events', () => {
  let h: WebhookHarness;
  let tenantId: string;

  beforeAll(async () => {
    h = await startHarness({ WEBHOOK_RELAY_INTERVAL_MS: '60000' });
    tenantId = (await seedTenant(h.t.deps)).tenant.id;
  });
  afterAll(() => h.close());

  const db = () => h.t.deps.db;

  const listenerPid = () =>
    waitUntil(
      async () => {
        const rows = await db().$queryRaw<{ pid: number }[]>`
          SELECT pid FROM pg_stat_activity
          WHERE datname = current_database() AND query = ${`LISTEN ${OUTBOX_CHANNEL}`}`;
        return rows[0]?.pid;
      },
      { timeoutMs: 10_000, intervalMs: 100, what: 'a LISTEN connection' },
    );

  const commitEvent = async () => {
    const entityId = randomUUID();
    await db().$transaction((tx) =>
      recordEvent(tx, {
        tenantId,
        name: 'booking.cancelled',
        entityType: 'booking',
        entityId,
        fields: {
          booking_id: entityId,
          experience_id: randomUUID(),
          venue_id: randomUUID(),
          slot_id: randomUUID(),
          customer_email: 'guest@example.com',
          cancelled_by_user_id: null,
        },
      }),
    );
    return entityId;
  };

  const relayedWithin = (entityId: string, timeoutMs: number) =>
    waitUntil(() => db().event.findFirst({ where: { entityId, relayedAt: { not: null } } }), {
      timeoutMs,
      intervalMs: 100,
      what: `event ${entityId} relayed`,
    });

  it('when an event commits, then the relay picks it up at once, without waiting for its poll', async () => {
    await listenerPid();
    const entityId = await commitEvent();

    await expect(relayedWithin(entityId, 5_000)).resolves.toMatchObject({ entityId });
  });

  it('when the LISTEN connection is cut, then the relay reconnects and is woken by notifications again', async () => {
    const before = await listenerPid();

    await db().$queryRaw`SELECT pg_terminate_backend(${before}::int)`;
    const after = await waitUntil(
      async () => {
        const pid = await listenerPid();
        return pid !== before && pid;
      },
      { timeoutMs: 15_000, intervalMs: 100, what: 'a new LISTEN connection' },
    );
    const entityId = await commitEvent();

    expect(after).not.toBe(before);
    await expect(relayedWithin(entityId, 5_000)).resolves.toMatchObject({ entityId });
  });
});

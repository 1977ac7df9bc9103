import { randomUUID } from 'node:crypto';
import { recordEvent } from '@booking/events';
import { seedTenant, sleep, waitUntil } from '@booking/test-kit';
import { startHarness, type WebhookHarness } from './support/webhook-harness';

// The relay finds committed events by polling the outbox; no NOTIFY wakes it (a NOTIFY in each
// event-writing transaction would make their commits take turns across the cluster).

const commitEvent = async (h: WebhookHarness, tenantId: string) => {
  const entityId = randomUUID();
  await h.t.deps.db.$transaction((tx) =>
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

const relayedAt = async (h: WebhookHarness, entityId: string) =>
  (await h.t.deps.db.event.findFirst({ where: { entityId } }))?.relayedAt ?? null;

describe('the outbox relay polling for committed events', () => {
  describe('every 100 ms', () => {
    let h: WebhookHarness;
    let tenantId: string;

    beforeAll(async () => {
      h = await startHarness({ WEBHOOK_RELAY_INTERVAL_MS: '100' });
      tenantId = (await seedTenant(h.t.deps)).tenant.id;
    });
    afterAll(() => h.close());

    it('when events commit one after another, then each waits about half an interval for its relay (the median under 4 intervals), and the dispatcher holds no LISTEN connection', async () => {
      const waits: number[] = [];
      for (let i = 0; i < 7; i += 1) {
        const committed = Date.now();
        const entityId = await commitEvent(h, tenantId);
        const relayed = await waitUntil(() => relayedAt(h, entityId), {
          timeoutMs: 5_000,
          intervalMs: 10,
          what: `event ${entityId} relayed`,
        });
        waits.push(relayed.getTime() - committed);
      }
      waits.sort((a, b) => a - b);
      // Polled every 100 ms, a wait averages 50 ms; a relay polling once a second would have
      // waited about 500. The bound leaves room for a busy machine.
      expect(waits[3]).toBeLessThan(400);
      expect(waits[6]).toBeLessThan(1_500);
      const listening = await h.t.deps.db.$queryRaw<{ count: bigint }[]>`
        SELECT count(*) AS count FROM pg_stat_activity
        WHERE datname = current_database() AND query ILIKE 'LISTEN%'`;
      expect(Number(listening[0]!.count)).toBe(0);
    });
  });

  describe('with the next poll a minute away', () => {
    let h: WebhookHarness;
    let tenantId: string;

    beforeAll(async () => {
      h = await startHarness({ WEBHOOK_RELAY_INTERVAL_MS: '60000' });
      tenantId = (await seedTenant(h.t.deps)).tenant.id;
      // The relay drains once as it starts (an empty outbox: milliseconds); the event below
      // commits well after that drain.
      await sleep(2_000);
    });
    afterAll(() => h.close());

    it('when an event commits, then nothing wakes the relay before its poll: the event waits', async () => {
      const entityId = await commitEvent(h, tenantId);

      await sleep(1_500);

      expect(await relayedAt(h, entityId)).toBeNull();
    });
  });
});

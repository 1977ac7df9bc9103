import { randomBytes } from 'node:crypto';
import { generateWebhookSecret, sealSecret } from '@booking/signing';
import { createIsolatedDatabase, createTestApp, seedTenant, type TestApp } from '@booking/test-kit';
import { enqueueDeliveries } from '@booking/webhook-queue';
import { sweepUnqueued } from '../src/maintenance/sweep-unqueued';

// The dispatchers' sweep on the real PostgreSQL and Redis: deliveries pending in PostgreSQL whose
// job is gone are queued, and an overdue one whose job is still delayed is sent at once. A database
// and queue prefix of its own, so the sweep sees only this file's deliveries.

describe('sweepUnqueued', () => {
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

  /** A pending delivery of a new endpoint, created a minute ago and due since then. */
  async function overdueDelivery(status: 'pending' | 'waiting' = 'pending') {
    const demo = await seedTenant(t.deps);
    const endpoint = await t.deps.db.webhookEndpoint.create({
      data: {
        tenantId: demo.tenant.id,
        url: 'https://hooks.example.com/sweep',
        events: ['booking.created'],
        secretCiphertext: sealSecret(randomBytes(32).toString('hex'), generateWebhookSecret()),
      },
    });
    return t.deps.db.webhookDelivery.create({
      data: {
        tenantId: demo.tenant.id,
        endpointId: endpoint.id,
        eventName: 'booking.created',
        isTest: true,
        status,
        createdAt: new Date(Date.now() - 60_000),
        updatedAt: new Date(Date.now() - 60_000),
      },
    });
  }

  const delays = () => t.deps.config.webhooks.retryDelaysMs;

  it('when an overdue delivery has no job, then it is queued', async () => {
    const delivery = await overdueDelivery();

    expect(await sweepUnqueued(t.deps.db, t.deps.deliveryQueue, delays(), 30_000)).toBe(1);

    expect(await (await t.deps.deliveryQueue.getJob(delivery.id))?.getState()).toBe('waiting');
  });

  it('when an overdue delivery still has a job delayed by an hour (a redeliver whose new job Redis refused), then the job goes now', async () => {
    const delivery = await overdueDelivery();
    await enqueueDeliveries(t.deps.deliveryQueue, [{ id: delivery.id, delayMs: 60 * 60_000 }], delays());
    expect(await (await t.deps.deliveryQueue.getJob(delivery.id))!.getState()).toBe('delayed');

    await sweepUnqueued(t.deps.db, t.deps.deliveryQueue, delays(), 30_000);

    expect(await (await t.deps.deliveryQueue.getJob(delivery.id))!.getState()).toBe('waiting');
  });

  it('when a delivery still waits on an endpoint that is active again, then it is made pending and queued', async () => {
    const delivery = await overdueDelivery('waiting');

    expect(await sweepUnqueued(t.deps.db, t.deps.deliveryQueue, delays(), 30_000)).toBe(1);

    expect(await t.deps.db.webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } })).toMatchObject({
      status: 'pending',
      attemptCount: 0,
    });
    expect(await (await t.deps.deliveryQueue.getJob(delivery.id))?.getState()).toBe('waiting');
  });
});

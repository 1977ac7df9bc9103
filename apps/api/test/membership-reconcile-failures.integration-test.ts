import type { DemoTenant } from '@booking/db';
import {
  deliverStripeEvent,
  type FakeInvoice,
  type FakeStripe,
  pendingRecurringMembership,
  signedBillingEvent,
  TEST_WEBHOOK_SECRET,
  type TestApp,
  waitUntil,
} from '@booking/test-kit';
import { lifecycleJobs } from '../src/jobs/lifecycle-jobs';
import type { WorkerDeps } from '../src/jobs/worker-deps';
import { reconcileMemberships } from '../src/membership-billing/reconcile-memberships';
import {
  type BillingJobsWorld,
  hideSubscription,
  startBillingJobsWorld,
  stopBillingJobsWorld,
} from './support/billing-jobs-world';

// The reconcile job when Stripe will not show a subscription: it backs off from that membership
// alone, and its failure claims no convergence, so notifications read before it still converge.
// The job covers every tenant, so this file has a database of its own.

const RECONCILE_SECONDS = 3600;

let fake: FakeStripe;
let t: TestApp;
let second: TestApp;
let demo: DemoTenant;
let world: BillingJobsWorld;

beforeAll(async () => {
  world = await startBillingJobsWorld(RECONCILE_SECONDS);
  ({ fake, t, second, demo } = world);
});
afterAll(() => stopBillingJobsWorld(world));

const membershipOf = (id: string) => t.deps.db.membership.findUniqueOrThrow({ where: { id } });
const readsOf = (subscriptionId: string) => fake.requestsTo('GET', `/v1/subscriptions/${subscriptionId}`).length;

async function activeMembership() {
  const m = await pendingRecurringMembership(t.deps.db, fake, demo.tenant.id);
  const { invoice } = fake.billing.payFirstInvoice(m.subscriptionId);
  const paid = signedBillingEvent('invoice.paid', invoice as FakeInvoice, { secret: TEST_WEBHOOK_SECRET });
  expect((await deliverStripeEvent(t, paid)).status).toBe(200);
  return m;
}

/** Read from the provider `days` ago: due for the daily reconcile, the stalest first. */
const readDaysAgo = (membershipId: string, days: number) =>
  t.deps.db.membership.update({
    where: { id: membershipId },
    data: { stripeSyncedAt: new Date(Date.now() - days * 86_400_000) },
  });

describe('reconcile failures', () => {
  it('when a reconcile read fails while a notification read earlier is still on its way, then that notification still converges the status (past_due)', async () => {
    const m = await activeMembership();
    await readDaysAgo(m.membershipId, 2);
    // The renewal fails; Stripe keeps retrying, and tells us with subscription.updated.
    const { subscription } = fake.billing.cycle(m.subscriptionId, { outcome: 'failed' });
    expect(subscription.status).toBe('past_due');
    const updated = signedBillingEvent('customer.subscription.updated', subscription, { secret: TEST_WEBHOOK_SECRET });

    // The notification reads the subscription, then waits for the order (held here, as another
    // request would) while the reconcile job's read fails and is recorded.
    let delivery: Promise<{ status: number }> | undefined;
    await second.deps.db.$transaction(
      async (tx) => {
        await tx.$queryRaw`SELECT id FROM orders WHERE id = ${m.orderId}::uuid FOR UPDATE`;
        const before = readsOf(m.subscriptionId);
        // A supertest request is sent once it is awaited: then() sends it now.
        delivery = deliverStripeEvent(t, updated).then((response) => response);
        await waitUntil(() => readsOf(m.subscriptionId) > before, { what: 'the notification reading Stripe' });
        const show = hideSubscription(fake, m.subscriptionId);
        expect(await reconcileMemberships(t.deps)).toBe(1);
        show();
      },
      { timeout: 20_000 },
    );
    expect((await delivery!).status).toBe(200);

    const membership = await membershipOf(m.membershipId);
    expect(membership.status).toBe('past_due');
    expect(await t.deps.db.event.count({ where: { entityId: m.membershipId, name: 'membership.past_due' } })).toBe(1);
    // Converged from the notification's read, taken before the failure.
    expect(membership.stripeSyncedAt!.getTime()).toBeLessThan(membership.reconcileFailedAt!.getTime());
  });

  it('when Stripe will not show one subscription, then the rest of the batch is converged, and that one is not read again before MEMBERSHIP_RECONCILE_SECONDS and is after', async () => {
    // Two renewals failed, never notified; the one Stripe will not show is the stalest, read first.
    const hidden = await activeMembership();
    const shown = await activeMembership();
    for (const m of [hidden, shown]) fake.billing.cycle(m.subscriptionId, { outcome: 'failed' });
    await readDaysAgo(hidden.membershipId, 3);
    await readDaysAgo(shown.membershipId, 2);
    const show = hideSubscription(fake, hidden.subscriptionId);

    const untried = readsOf(hidden.subscriptionId);
    const failedAt = Date.now();
    await Promise.all([reconcileMemberships(t.deps), reconcileMemberships(second.deps)]);
    expect(await membershipOf(shown.membershipId)).toMatchObject({ status: 'past_due' });
    expect(await membershipOf(hidden.membershipId)).toMatchObject({ status: 'active' });
    const tried = readsOf(hidden.subscriptionId);
    expect(tried).toBeGreaterThan(untried);

    // Shown again, but within MEMBERSHIP_RECONCILE_SECONDS of the failure: left alone.
    show();
    await reconcileMemberships(t.deps, new Date(failedAt + (RECONCILE_SECONDS - 60) * 1000));
    expect(readsOf(hidden.subscriptionId)).toBe(tried);
    expect((await membershipOf(hidden.membershipId)).status).toBe('active');

    // Once it has passed, it is read and converged (an active membership, not only after a day).
    await reconcileMemberships(t.deps, new Date(Date.now() + (RECONCILE_SECONDS + 60) * 1000));
    expect(readsOf(hidden.subscriptionId)).toBe(tried + 1);
    expect(await membershipOf(hidden.membershipId)).toMatchObject({ status: 'past_due' });
  });

  it('when a subscription keeps failing and each batch outlasts MEMBERSHIP_RECONCILE_SECONDS, then the scheduled run still ends, having read it once', async () => {
    const m = await activeMembership();
    await readDaysAgo(m.membershipId, 2);
    const show = hideSubscription(fake, m.subscriptionId);
    try {
      // A zero interval: every batch outlasts it, as a slow Stripe would make a batch outlast a short one.
      const config = { ...t.deps.config, memberships: { ...t.deps.config.memberships, reconcileSeconds: 0 } };
      const job = lifecycleJobs({ ...t.deps, config } as unknown as WorkerDeps).find(
        (j) => j.name === 'reconcile-memberships',
      )!;
      const before = readsOf(m.subscriptionId);
      const stop = new AbortController();
      const timer = setTimeout(() => stop.abort(), 10_000);
      try {
        await job.handler({ signal: stop.signal } as Parameters<typeof job.handler>[0]);
      } finally {
        clearTimeout(timer);
      }
      expect(stop.signal.aborted).toBe(false);
      // Only the Stripe SDK's own retries of the one read.
      expect(readsOf(m.subscriptionId) - before).toBeLessThanOrEqual(3);
    } finally {
      show();
    }
  });
});

import type { DemoTenant } from '@booking/db';
import {
  deliverStripeEvent,
  type FakeInvoice,
  type FakeStripe,
  pendingRecurringMembership,
  signedBillingEvent,
  TEST_WEBHOOK_SECRET,
  type TestApp,
  untilDone,
} from '@booking/test-kit';
import { endUnpaidMemberships } from '../src/membership-billing/end-unpaid-memberships';
import { reconcileMemberships } from '../src/membership-billing/reconcile-memberships';
import { type BillingJobsWorld, startBillingJobsWorld, stopBillingJobsWorld } from './support/billing-jobs-world';

// The recurring-billing jobs as the lifecycle worker runs them, two at once on separate
// connection pools as two worker pods would: the grace job ending memberships whose payment
// never came, and the reconcile job repairing what lost notifications left behind. The jobs
// cover every tenant, so this file has a database of its own.

let fake: FakeStripe;
let t: TestApp;
let second: TestApp;
let demo: DemoTenant;
let world: BillingJobsWorld;

beforeAll(async () => {
  world = await startBillingJobsWorld(3600);
  ({ fake, t, second, demo } = world);
});
afterAll(() => stopBillingJobsWorld(world));

const paid = (invoice: FakeInvoice) => signedBillingEvent('invoice.paid', invoice, { secret: TEST_WEBHOOK_SECRET });
const failed = (invoice: FakeInvoice) =>
  signedBillingEvent('invoice.payment_failed', invoice, { secret: TEST_WEBHOOK_SECRET });

async function deliver(event: { payload: string; signature: string }) {
  expect((await deliverStripeEvent(t, event)).status).toBe(200);
}

const events = (membershipId: string, name: string) =>
  t.deps.db.event.findMany({ where: { entityId: membershipId, name }, orderBy: { createdAt: 'asc' } });
const membershipOf = (id: string) => t.deps.db.membership.findUniqueOrThrow({ where: { id } });

async function activeMembership() {
  const m = await pendingRecurringMembership(t.deps.db, fake, demo.tenant.id);
  await deliver(paid(fake.billing.payFirstInvoice(m.subscriptionId).invoice));
  return m;
}

/** Read from the provider two days ago: due for the daily reconcile. */
const stale = (membershipId: string) =>
  t.deps.db.membership.update({
    where: { id: membershipId },
    data: { stripeSyncedAt: new Date(Date.now() - 2 * 86_400_000) },
  });

describe('recurring billing jobs', () => {
  it('when a membership paused for payment is past its grace, then two grace runs at once cancel the subscription and record membership.ended{payment_failed} once; one still in grace is left alone', async () => {
    const pause = async () => {
      const m = await activeMembership();
      const { invoice } = fake.billing.cycle(m.subscriptionId, { outcome: 'failed', final: true });
      await deliver(failed(invoice!));
      expect((await membershipOf(m.membershipId)).status).toBe('paused_for_payment');
      return m;
    };
    const overdue = await pause();
    const inGrace = await pause();
    await t.deps.db.membership.update({
      where: { id: overdue.membershipId },
      data: { graceEndsAt: new Date(Date.now() - 60_000) },
    });

    const [a, b] = await Promise.all([
      untilDone(() => endUnpaidMemberships(t.deps)),
      untilDone(() => endUnpaidMemberships(second.deps)),
    ]);
    expect(a + b).toBe(1);
    expect(fake.billing.subscriptions.get(overdue.subscriptionId)!.status).toBe('canceled');
    const membership = await membershipOf(overdue.membershipId);
    expect(membership).toMatchObject({ status: 'ended', endReason: 'payment_failed', graceEndsAt: null });
    expect((await events(overdue.membershipId, 'membership.ended')).map((event) => event.data)).toEqual([
      expect.objectContaining({ reason: 'payment_failed', actor_user_id: null }),
    ]);
    // The provider's own deleted notification afterwards changes nothing.
    await deliver(
      signedBillingEvent('customer.subscription.deleted', fake.billing.subscriptions.get(overdue.subscriptionId)!, {
        secret: TEST_WEBHOOK_SECRET,
      }),
    );
    expect(await events(overdue.membershipId, 'membership.ended')).toHaveLength(1);

    expect(await membershipOf(inGrace.membershipId)).toMatchObject({ status: 'paused_for_payment' });
    expect(fake.billing.subscriptions.get(inGrace.subscriptionId)!.status).toBe('unpaid');
  });

  it('when the member paid the open invoice after the grace ran out and no notification has been handled yet, then two grace runs at once do not cancel: the membership is active again (renewed once, recovered) with no membership.ended', async () => {
    const m = await activeMembership();
    const { invoice } = fake.billing.cycle(m.subscriptionId, { outcome: 'failed', final: true });
    await deliver(failed(invoice!));
    expect((await membershipOf(m.membershipId)).status).toBe('paused_for_payment');
    await t.deps.db.membership.update({
      where: { id: m.membershipId },
      data: { graceEndsAt: new Date(Date.now() - 60_000) },
    });
    // Paid on the hosted invoice page; invoice.paid and subscription.updated are still on their way.
    const payment = fake.billing.retryInvoice(invoice!.id, { outcome: 'paid' });
    expect(payment.subscription!.status).toBe('active');

    const [a, b] = await Promise.all([
      untilDone(() => endUnpaidMemberships(t.deps)),
      untilDone(() => endUnpaidMemberships(second.deps)),
    ]);
    expect(a + b).toBe(0);
    expect(fake.requestsTo('DELETE', `/v1/subscriptions/${m.subscriptionId}`)).toEqual([]);
    expect(fake.billing.subscriptions.get(m.subscriptionId)!.status).toBe('active');
    expect(await membershipOf(m.membershipId)).toMatchObject({
      status: 'active',
      graceEndsAt: null,
      expiresAt: new Date(payment.subscription!.items.data[0]!.current_period_end * 1000),
    });
    expect(await events(m.membershipId, 'membership.ended')).toEqual([]);
    expect((await events(m.membershipId, 'membership.renewed')).map((event) => event.data)).toEqual([
      expect.objectContaining({ invoice_id: invoice!.id }),
    ]);
    expect((await events(m.membershipId, 'membership.payment_succeeded')).at(-1)!.data).toMatchObject({
      invoice_id: invoice!.id,
      recovered: true,
    });

    // The notification turns up after all: nothing new, and a later grace run has nothing to do.
    await deliver(paid(payment.invoice));
    expect(await events(m.membershipId, 'membership.renewed')).toHaveLength(1);
    expect(await endUnpaidMemberships(t.deps)).toBe(0);
    expect((await membershipOf(m.membershipId)).status).toBe('active');
  });

  it('when a membership past its grace is held by another transaction (a notification being handled), then the grace job asks Stripe nothing and leaves it; the next run ends it', async () => {
    const m = await activeMembership();
    const { invoice } = fake.billing.cycle(m.subscriptionId, { outcome: 'failed', final: true });
    await deliver(failed(invoice!));
    await t.deps.db.membership.update({
      where: { id: m.membershipId },
      data: { graceEndsAt: new Date(Date.now() - 60_000) },
    });
    const asked = () => fake.requestsTo('DELETE', `/v1/subscriptions/${m.subscriptionId}`).length;
    const reads = () => fake.requestsTo('GET', `/v1/subscriptions/${m.subscriptionId}`).length;
    const readsBefore = reads();

    await t.deps.db.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT id FROM memberships WHERE id = ${m.membershipId}::uuid FOR UPDATE`;
      expect(await endUnpaidMemberships(second.deps)).toBe(0);
    });
    expect(asked()).toBe(0);
    expect(reads()).toBe(readsBefore);
    expect((await membershipOf(m.membershipId)).status).toBe('paused_for_payment');

    expect(await untilDone(() => endUnpaidMemberships(second.deps))).toBe(1);
    expect(asked()).toBe(1);
    expect(await membershipOf(m.membershipId)).toMatchObject({ status: 'ended', endReason: 'payment_failed' });
    expect(await events(m.membershipId, 'membership.ended')).toHaveLength(1);
  });

  it('when notifications were lost (a first payment, a renewal, a final failure), then two reconcile runs at once repair each membership and record each event once', async () => {
    // The first invoice paid, never notified.
    const unseenStart = await pendingRecurringMembership(t.deps.db, fake, demo.tenant.id);
    const firstPaid = fake.billing.payFirstInvoice(unseenStart.subscriptionId);
    // A renewal paid, never notified.
    const unseenRenewal = await activeMembership();
    const renewal = fake.billing.cycle(unseenRenewal.subscriptionId, { outcome: 'paid' });
    await stale(unseenRenewal.membershipId);
    // The renewal's last attempt failed, never notified.
    const unseenFailure = await activeMembership();
    const failure = fake.billing.cycle(unseenFailure.subscriptionId, { outcome: 'failed', final: true });
    await stale(unseenFailure.membershipId);
    // Read a moment ago, nothing to do: not read again.
    const fresh = await activeMembership();
    const readsOfFresh = () => fake.requestsTo('GET', `/v1/subscriptions/${fresh.subscriptionId}`).length;
    const freshReads = readsOfFresh();

    await Promise.all([
      untilDone(() => reconcileMemberships(t.deps)),
      untilDone(() => reconcileMemberships(second.deps)),
    ]);

    const started = await membershipOf(unseenStart.membershipId);
    expect(started).toMatchObject({
      status: 'active',
      expiresAt: new Date(firstPaid.subscription.items.data[0]!.current_period_end * 1000),
    });
    expect(await events(unseenStart.membershipId, 'membership.subscription_started')).toHaveLength(1);
    expect(await events(unseenStart.membershipId, 'membership.payment_succeeded')).toHaveLength(1);
    expect(await t.deps.db.order.findUniqueOrThrow({ where: { id: unseenStart.orderId } })).toMatchObject({
      status: 'paid',
    });

    expect(await membershipOf(unseenRenewal.membershipId)).toMatchObject({
      status: 'active',
      expiresAt: new Date(renewal.subscription.items.data[0]!.current_period_end * 1000),
    });
    expect((await events(unseenRenewal.membershipId, 'membership.renewed')).map((event) => event.data)).toEqual([
      expect.objectContaining({ invoice_id: renewal.invoice!.id }),
    ]);

    expect(await membershipOf(unseenFailure.membershipId)).toMatchObject({ status: 'paused_for_payment' });
    expect((await events(unseenFailure.membershipId, 'membership.payment_failed')).map((e) => e.data)).toEqual([
      expect.objectContaining({ invoice_id: failure.invoice!.id, final: true }),
    ]);
    expect(await events(unseenFailure.membershipId, 'membership.paused_for_payment')).toHaveLength(1);

    expect(readsOfFresh()).toBe(freshReads);

    // The notifications turn up after all: nothing new.
    await deliver(paid(firstPaid.invoice));
    await deliver(paid(renewal.invoice!));
    await deliver(failed(failure.invoice!));
    expect(await events(unseenStart.membershipId, 'membership.payment_succeeded')).toHaveLength(1);
    expect(await events(unseenRenewal.membershipId, 'membership.renewed')).toHaveLength(1);
    expect(await events(unseenFailure.membershipId, 'membership.payment_failed')).toHaveLength(1);
  });
});

import request from 'supertest';
import type Stripe from 'stripe';
import type { DemoTenant } from '@booking/db';
import {
  bearer,
  createTestApp,
  deliverStripeEvent,
  deliverStripeEvents,
  fakeStripeClient,
  keyIdOf,
  type FakeInvoice,
  type FakeStripe,
  type FakeSubscription,
  pendingRecurringMembership,
  seedTenant,
  signedBillingEvent,
  startFakeStripe,
  stopFakeStripe,
  stripeEnv,
  TEST_WEBHOOK_SECRET,
  type TestApp,
  seedMembershipPlan,
} from '@booking/test-kit';
import { retrieveSubscription, syncMembership } from '../src/membership-billing/sync-membership';
import { withdrawPlanChange } from '../src/membership-changes/withdraw-plan-change';

// Recurring billing from Stripe's notifications, on the real PostgreSQL and the fake Stripe: the
// first invoice, renewals, failed payments and dunning, subscription changes, and the same
// notifications delivered twice, late and in reverse order converging to one state.

let fake: FakeStripe;
let t: TestApp;
let demo: DemoTenant;

beforeAll(async () => {
  fake = await startFakeStripe();
  t = createTestApp({ ...stripeEnv(fake.url), MEMBERSHIP_PAYMENT_GRACE_DAYS: '5' });
  demo = await seedTenant(t.deps);
});
afterAll(async () => {
  await t.close();
  await stopFakeStripe(fake);
});

const paid = (invoice: FakeInvoice, eventId?: string) =>
  signedBillingEvent('invoice.paid', invoice, { secret: TEST_WEBHOOK_SECRET, eventId });
const failed = (invoice: FakeInvoice, eventId?: string) =>
  signedBillingEvent('invoice.payment_failed', invoice, { secret: TEST_WEBHOOK_SECRET, eventId });
const subscriptionEvent = (
  type: 'customer.subscription.updated' | 'customer.subscription.deleted',
  subscription: FakeSubscription,
) => signedBillingEvent(type, subscription, { secret: TEST_WEBHOOK_SECRET });

async function deliver(...events: { payload: string; signature: string }[]) {
  for (const event of events) {
    const answer = await deliverStripeEvent(t, event);
    expect(answer.status).toBe(200);
  }
}

const events = (membershipId: string, name: string) =>
  t.deps.db.event.findMany({ where: { entityId: membershipId, name }, orderBy: { createdAt: 'asc' } });
const membershipOf = (id: string) => t.deps.db.membership.findUniqueOrThrow({ where: { id } });

const NAMES = [
  'membership.subscription_started',
  'membership.payment_succeeded',
  'membership.renewed',
  'membership.payment_failed',
  'membership.past_due',
  'membership.paused_for_payment',
  'membership.ended',
];

async function eventCounts(membershipId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const name of NAMES) counts[name] = (await events(membershipId, name)).length;
  return counts;
}

/** The membership's events as they were recorded (one transaction's events in insertion order). */
async function timeline(membershipId: string) {
  const rows = await t.deps.db.$queryRaw<{ name: string; data: Record<string, unknown> }[]>`
    SELECT name, data FROM events WHERE entity_id = ${membershipId}::uuid ORDER BY created_at, ctid`;
  return rows;
}

/**
 * A renewal Stripe took a minute ago for a period that began then (the subscription renewed
 * early, as after a billing-anchor change): money the membership keeps if it ends now. Its
 * invoice.paid is not delivered.
 */
function renewalPaidMinuteAgo(subscriptionId: string) {
  const { invoice } = fake.billing.cycle(subscriptionId, { outcome: 'paid' });
  const minuteAgo = Math.floor(Date.now() / 1000) - 60;
  const stored = fake.billing.invoices.get(invoice!.id)!;
  for (const line of stored.lines.data) line.period.start = minuteAgo;
  stored.status_transitions.paid_at = minuteAgo;
  fake.billing.subscriptions.get(subscriptionId)!.items.data[0]!.current_period_start = minuteAgo;
  return structuredClone(stored);
}

/** A recurring membership whose first invoice is paid and notified. */
async function activeMembership() {
  const m = await pendingRecurringMembership(t.deps.db, fake, demo.tenant.id);
  const first = fake.billing.payFirstInvoice(m.subscriptionId);
  await deliver(paid(first.invoice));
  return { ...m, first };
}

describe('recurring membership billing from Stripe notifications', () => {
  it('when the first invoice is paid (notified three times, twice under one id), then the order is paid, the membership active for the period, and subscription_started and payment_succeeded{create} are recorded once', async () => {
    const m = await pendingRecurringMembership(t.deps.db, fake, demo.tenant.id);
    const { invoice, subscription } = fake.billing.payFirstInvoice(m.subscriptionId);
    const same = paid(invoice);
    const answers = await Promise.all([same, same, paid(invoice)].map((event) => deliverStripeEvent(t, event)));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);

    const item = subscription.items.data[0]!;
    const membership = await membershipOf(m.membershipId);
    expect(membership).toMatchObject({
      status: 'active',
      startsAt: new Date(item.current_period_start * 1000),
      periodStart: new Date(item.current_period_start * 1000),
      expiresAt: new Date(item.current_period_end * 1000),
    });
    expect(membership.stripeSyncedAt).not.toBeNull();
    const order = await t.deps.db.order.findUniqueOrThrow({ where: { id: m.orderId } });
    expect(order).toMatchObject({ status: 'paid', paidCents: 2500 });

    const started = await events(m.membershipId, 'membership.subscription_started');
    expect(started).toHaveLength(1);
    expect(started[0]!.data).toMatchObject({
      membership_id: m.membershipId,
      plan_id: m.planId,
      customer_id: m.customerId,
      holder_customer_id: m.customerId,
      order_id: m.orderId,
      subscription_id: m.subscriptionId,
      invoice_id: invoice.id,
      amount_cents: 2500,
      currency: 'EUR',
      period_start: new Date(item.current_period_start * 1000).toISOString(),
      period_end: new Date(item.current_period_end * 1000).toISOString(),
    });
    const succeeded = await events(m.membershipId, 'membership.payment_succeeded');
    expect(succeeded.map((event) => event.data)).toEqual([
      expect.objectContaining({
        invoice_id: invoice.id,
        billing_reason: 'create',
        amount_cents: 2500,
        attempt_count: 1,
        recovered: false,
      }),
    ]);
    const row = await t.deps.db.membershipInvoice.findUniqueOrThrow({ where: { stripeInvoiceId: invoice.id } });
    expect(row).toMatchObject({
      status: 'paid',
      billingReason: 'subscription_create',
      priceId: m.priceId,
      amountPaidCents: 2500,
    });
  });

  it('when the first payment fails, then nothing is recorded and the order stays pending', async () => {
    const m = await pendingRecurringMembership(t.deps.db, fake, demo.tenant.id);
    const { invoice } = fake.billing.retryInvoice(m.firstInvoiceId, { outcome: 'failed' });
    await deliver(failed(invoice));
    expect(await membershipOf(m.membershipId)).toMatchObject({ status: 'pending_payment' });
    expect(await t.deps.db.order.findUniqueOrThrow({ where: { id: m.orderId } })).toMatchObject({
      status: 'pending_payment',
    });
    expect(await eventCounts(m.membershipId)).toEqual(Object.fromEntries(NAMES.map((name) => [name, 0])));
  });

  it('when a renewal is paid, then expires_at moves to the new period end, and payment_succeeded{cycle} and renewed are recorded once', async () => {
    const m = await activeMembership();
    const { invoice, subscription } = fake.billing.cycle(m.subscriptionId, { outcome: 'paid' });
    await deliver(paid(invoice!), paid(invoice!));
    const item = subscription.items.data[0]!;
    expect(await membershipOf(m.membershipId)).toMatchObject({
      status: 'active',
      periodStart: new Date(item.current_period_start * 1000),
      expiresAt: new Date(item.current_period_end * 1000),
    });
    const renewed = await events(m.membershipId, 'membership.renewed');
    expect(renewed.map((event) => event.data)).toEqual([
      expect.objectContaining({
        invoice_id: invoice!.id,
        period_start: new Date(item.current_period_start * 1000).toISOString(),
        period_end: new Date(item.current_period_end * 1000).toISOString(),
        amount_cents: 2500,
        currency: 'EUR',
      }),
    ]);
    const succeeded = await events(m.membershipId, 'membership.payment_succeeded');
    expect(succeeded.map((event) => (event.data as { billing_reason: string }).billing_reason)).toEqual([
      'create',
      'cycle',
    ]);
    expect(succeeded[1]!.data).toMatchObject({ recovered: false, attempt_count: 1 });
  });

  it('when Stripe starts the next period but has not collected its renewal yet (the subscription still active), then expires_at stays at the end of the period paid for; when that renewal then fails for good and the subscription ends, membership.ended reports that date as paid through', async () => {
    const m = await activeMembership();
    const before = await membershipOf(m.membershipId);
    const cycled = fake.billing.cycle(m.subscriptionId, 'later');
    expect(cycled.subscription.status).toBe('active');
    await deliver(subscriptionEvent('customer.subscription.updated', cycled.subscription));
    expect(await membershipOf(m.membershipId)).toMatchObject({
      status: 'active',
      periodStart: before.periodStart,
      expiresAt: before.expiresAt,
    });

    const last = fake.billing.retryInvoice(cycled.invoice!.id, {
      outcome: 'failed',
      final: true,
      afterFinal: 'canceled',
    });
    await deliver(failed(last.invoice), subscriptionEvent('customer.subscription.deleted', last.subscription!));
    expect(await membershipOf(m.membershipId)).toMatchObject({
      status: 'ended',
      endReason: 'payment_failed',
      expiresAt: before.expiresAt,
    });
    expect((await events(m.membershipId, 'membership.ended')).map((event) => event.data)).toEqual([
      expect.objectContaining({ paid_through: before.expiresAt!.toISOString() }),
    ]);
    expect(await events(m.membershipId, 'membership.renewed')).toHaveLength(0);
  });

  it('when a renewal not collected at first is then paid, then expires_at moves to the new period end only then, whether the subscription update is handled before the payment or after it, or the payment is found by the reconcile read alone', async () => {
    const renew = async (order: 'updated first' | 'paid first' | 'no notification') => {
      const m = await activeMembership();
      const before = await membershipOf(m.membershipId);
      const cycled = fake.billing.cycle(m.subscriptionId, 'later');
      const updated = subscriptionEvent('customer.subscription.updated', cycled.subscription);
      if (order !== 'paid first') {
        await deliver(updated);
        expect((await membershipOf(m.membershipId)).expiresAt).toEqual(before.expiresAt);
      }
      const { invoice } = fake.billing.retryInvoice(cycled.invoice!.id, { outcome: 'paid' });
      if (order === 'no notification') {
        await syncMembership(
          { db: t.deps.db, config: t.deps.config, stripe: t.deps.stripe! },
          { subscriptionId: m.subscriptionId },
        );
      } else await deliver(paid(invoice));
      if (order === 'paid first') await deliver(updated);
      const item = cycled.subscription.items.data[0]!;
      expect(await membershipOf(m.membershipId)).toMatchObject({
        status: 'active',
        periodStart: new Date(item.current_period_start * 1000),
        expiresAt: new Date(item.current_period_end * 1000),
      });
      expect(await events(m.membershipId, 'membership.renewed')).toHaveLength(1);
    };
    await renew('updated first');
    await renew('paid first');
    await renew('no notification');
  });

  it('when renewal attempts fail until retries run out and the member then pays, then past_due once, payment_failed per attempt (final on the last), paused_for_payment with grace and the sealed pay link, and payment_succeeded{recovered:true}', async () => {
    const m = await activeMembership();
    const before = await membershipOf(m.membershipId);
    const cycled = fake.billing.cycle(m.subscriptionId, { outcome: 'failed', declineCode: 'insufficient_funds' });
    const invoiceId = cycled.invoice!.id;
    await deliver(failed(cycled.invoice!), subscriptionEvent('customer.subscription.updated', cycled.subscription));

    expect(await membershipOf(m.membershipId)).toMatchObject({ status: 'past_due', expiresAt: before.expiresAt });
    expect((await events(m.membershipId, 'membership.past_due')).map((event) => event.data)).toEqual([
      expect.objectContaining({ invoice_id: invoiceId, amount_due_cents: 2500, currency: 'EUR' }),
    ]);
    const firstFailure = await events(m.membershipId, 'membership.payment_failed');
    expect(firstFailure.map((event) => event.data)).toEqual([
      expect.objectContaining({
        invoice_id: invoiceId,
        attempt_count: 1,
        final: false,
        failure_code: 'insufficient_funds',
      }),
    ]);
    expect((firstFailure[0]!.data as { next_attempt_at: string | null }).next_attempt_at).not.toBeNull();
    expect(firstFailure[0]!.data).not.toHaveProperty('hosted_invoice_url');
    expect(firstFailure[0]!.sealedData).toEqual(expect.any(String));

    const second = fake.billing.retryInvoice(invoiceId, { outcome: 'failed' });
    await deliver(failed(second.invoice));
    expect(await membershipOf(m.membershipId)).toMatchObject({ status: 'past_due' });

    const last = fake.billing.retryInvoice(invoiceId, { outcome: 'failed', final: true });
    const beforePause = Date.now();
    await deliver(failed(last.invoice));
    // A stale copy of an earlier attempt, under a new event id, changes nothing.
    await deliver(failed(cycled.invoice!));

    const paused = await membershipOf(m.membershipId);
    expect(paused.status).toBe('paused_for_payment');
    const graceMs = paused.graceEndsAt!.getTime() - beforePause;
    expect(graceMs).toBeGreaterThanOrEqual(5 * 86_400_000 - 1000);
    expect(graceMs).toBeLessThan(5 * 86_400_000 + 60_000);
    const failures = await events(m.membershipId, 'membership.payment_failed');
    expect(failures.map((event) => (event.data as { final: boolean }).final)).toEqual([false, false, true]);
    expect(failures[2]!.data).toMatchObject({ attempt_count: 3, next_attempt_at: null });
    const pausedEvents = await events(m.membershipId, 'membership.paused_for_payment');
    expect(pausedEvents.map((event) => event.data)).toEqual([
      expect.objectContaining({
        invoice_id: invoiceId,
        amount_due_cents: 2500,
        attempt_count: 3,
        grace_ends_at: paused.graceEndsAt!.toISOString(),
      }),
    ]);
    expect(pausedEvents[0]!.sealedData).toEqual(expect.any(String));
    expect(await events(m.membershipId, 'membership.past_due')).toHaveLength(1);

    // The member pays on the hosted invoice page.
    const recovered = fake.billing.retryInvoice(invoiceId, { outcome: 'paid' });
    await deliver(paid(recovered.invoice), paid(recovered.invoice));
    const active = await membershipOf(m.membershipId);
    expect(active).toMatchObject({ status: 'active', graceEndsAt: null });
    expect(active.expiresAt!.getTime()).toBeGreaterThan(before.expiresAt!.getTime());
    const succeeded = await events(m.membershipId, 'membership.payment_succeeded');
    expect(succeeded.map((event) => event.data)).toEqual([
      expect.objectContaining({ billing_reason: 'create', recovered: false }),
      expect.objectContaining({ billing_reason: 'cycle', invoice_id: invoiceId, attempt_count: 4, recovered: true }),
    ]);
    expect(await events(m.membershipId, 'membership.renewed')).toHaveLength(1);
    // A failure notified after the payment is stale.
    await deliver(failed(last.invoice));
    expect(await eventCounts(m.membershipId)).toMatchObject({
      'membership.payment_failed': 3,
      'membership.past_due': 1,
      'membership.paused_for_payment': 1,
    });
    expect((await membershipOf(m.membershipId)).status).toBe('active');
  });

  it('when the subscription is set to cancel at period end and then ends, then the membership follows the re-read subscription and membership.ended{provider} is recorded once, never reopened by an older update', async () => {
    const m = await activeMembership();
    const stripe = fakeStripeClient(fake);
    const activeCopy = structuredClone(fake.billing.subscriptions.get(m.subscriptionId)!);
    await stripe.subscriptions.update(m.subscriptionId, { cancel_at_period_end: true });
    await deliver(
      subscriptionEvent('customer.subscription.updated', fake.billing.subscriptions.get(m.subscriptionId)!),
    );
    expect(await membershipOf(m.membershipId)).toMatchObject({ status: 'active', cancelAtPeriodEnd: true });

    const ended = fake.billing.cycle(m.subscriptionId, { outcome: 'paid' });
    expect(ended.invoice).toBeNull();
    await deliver(subscriptionEvent('customer.subscription.deleted', ended.subscription));
    // Late: the update from when it was active.
    await deliver(subscriptionEvent('customer.subscription.updated', activeCopy));

    const membership = await membershipOf(m.membershipId);
    expect(membership).toMatchObject({ status: 'ended', endReason: 'provider' });
    const endedEvents = await events(m.membershipId, 'membership.ended');
    expect(endedEvents.map((event) => event.data)).toEqual([
      expect.objectContaining({
        reason: 'provider',
        ended_at: new Date(ended.subscription.ended_at! * 1000).toISOString(),
        paid_through: membership.expiresAt!.toISOString(),
        actor_user_id: null,
      }),
    ]);
  });

  it('when the last retry fails and the account cancels the subscription, then membership.ended{payment_failed}', async () => {
    const m = await activeMembership();
    const cycled = fake.billing.cycle(m.subscriptionId, { outcome: 'failed', final: true, afterFinal: 'canceled' });
    await deliver(failed(cycled.invoice!), subscriptionEvent('customer.subscription.deleted', cycled.subscription));
    expect(await membershipOf(m.membershipId)).toMatchObject({ status: 'ended', endReason: 'payment_failed' });
    expect((await events(m.membershipId, 'membership.ended')).map((event) => event.data)).toEqual([
      expect.objectContaining({ reason: 'payment_failed' }),
    ]);
  });

  it('when the notifications of a subscription (first invoice, renewal, failed renewal, deletion) arrive in order, reversed, duplicated or all at once, then every membership ends in the same state with the same events', async () => {
    const stripe = fakeStripeClient(fake);
    const scenario = async () => {
      const m = await pendingRecurringMembership(t.deps.db, fake, demo.tenant.id);
      const first = fake.billing.payFirstInvoice(m.subscriptionId);
      const renewal = fake.billing.cycle(m.subscriptionId, { outcome: 'paid' });
      const failure = fake.billing.cycle(m.subscriptionId, { outcome: 'failed' });
      await stripe.subscriptions.cancel(m.subscriptionId);
      const deleted = structuredClone(fake.billing.subscriptions.get(m.subscriptionId)!);
      const signed = [
        paid(first.invoice),
        paid(renewal.invoice!),
        failed(failure.invoice!),
        subscriptionEvent('customer.subscription.deleted', deleted),
      ];
      return { m, signed, renewalInvoice: renewal.invoice! };
    };
    const runs = [
      { name: 'in order', options: {} },
      { name: 'reversed', options: { order: 'reversed' as const } },
      { name: 'duplicated', options: { duplicate: true } },
      {
        name: 'reversed, duplicated, at once',
        options: { order: 'reversed' as const, duplicate: true, concurrent: true },
      },
    ];
    const outcomes = [];
    for (const run of runs) {
      const { m, signed, renewalInvoice } = await scenario();
      const answers = await deliverStripeEvents(t, signed, run.options);
      expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
      const membership = await membershipOf(m.membershipId);
      const order = await t.deps.db.order.findUniqueOrThrow({ where: { id: m.orderId } });
      const invoices = await t.deps.db.membershipInvoice.findMany({
        where: { membershipId: m.membershipId },
        orderBy: { periodStart: 'asc' },
      });
      // The renewal's money is given back once, whatever the delivery.
      const refunds = fake.refunds.filter((refund) => refund.metadata.invoice_id === renewalInvoice.id);
      expect(refunds.map((refund) => refund.amount)).toEqual([2500]);
      outcomes.push({
        run: run.name,
        state: {
          status: membership.status,
          endReason: membership.endReason,
          endedAt: membership.endedAt,
          startsAt: membership.startsAt,
          periodStart: membership.periodStart,
          expiresAt: membership.expiresAt,
          offset: membership.expiresAt!.getTime() - membership.startsAt!.getTime(),
          orderStatus: order.status,
          invoices: invoices.map((invoice) => ({
            reason: invoice.billingReason,
            status: invoice.status,
            attempts: invoice.attemptCount,
            review: invoice.reviewReason,
            refunded: invoice.refundedAt !== null,
          })),
        },
        counts: await eventCounts(m.membershipId),
      });
    }
    const comparable = outcomes.map(({ state, counts }) => ({
      ...state,
      endedAt: undefined,
      startsAt: undefined,
      periodStart: undefined,
      expiresAt: undefined,
      counts,
    }));
    for (const outcome of comparable) expect(outcome).toEqual(comparable[0]);
    expect(comparable[0]).toMatchObject({
      status: 'ended',
      endReason: 'provider',
      orderStatus: 'paid',
      counts: {
        'membership.subscription_started': 1,
        'membership.payment_succeeded': 1,
        'membership.renewed': 0,
        'membership.payment_failed': 0,
        'membership.past_due': 0,
        'membership.paused_for_payment': 0,
        'membership.ended': 1,
      },
    });
    // The renewal was for a period that had not begun when the subscription ended: given back.
    expect(comparable[0]!.invoices).toEqual([
      { reason: 'subscription_create', status: 'paid', attempts: 1, review: null, refunded: false },
      { reason: 'subscription_cycle', status: 'paid', attempts: 1, review: 'paid_after_ended', refunded: true },
      { reason: 'subscription_cycle', status: 'open', attempts: 1, review: null, refunded: false },
    ]);
  });

  it('when a renewal paid before a cancel now is not yet handled, then in every order (notified first, cancel first, together, duplicated after the deletion) the events are the same and in time order: payment_succeeded{cycle} and renewed before ended, whose paid_through includes the renewal', async () => {
    const cancelNow = (membershipId: string) =>
      request(t.app)
        .post(`/api/v1/memberships/${membershipId}/cancel`)
        .set('Authorization', bearer(demo.api_keys.manager))
        .send({ at: 'now' });
    const scenario = async (mode: 'notified first' | 'cancel first' | 'together' | 'cancel, deletion, duplicates') => {
      const m = await activeMembership();
      const renewal = renewalPaidMinuteAgo(m.subscriptionId);
      const deleted = () =>
        subscriptionEvent('customer.subscription.deleted', fake.billing.subscriptions.get(m.subscriptionId)!);
      if (mode === 'notified first') {
        await deliver(paid(renewal));
        expect((await cancelNow(m.membershipId)).status).toBe(200);
        await deliver(deleted());
      } else if (mode === 'cancel first') {
        expect((await cancelNow(m.membershipId)).status).toBe(200);
        await deliver(paid(renewal), deleted());
      } else if (mode === 'together') {
        const [ended, ...notified] = await Promise.all([
          cancelNow(m.membershipId),
          deliverStripeEvent(t, paid(renewal)),
          deliverStripeEvent(t, paid(renewal)),
        ]);
        expect([ended.status, ...notified.map((answer) => answer.status)]).toEqual([200, 200, 200]);
        await deliver(deleted());
      } else {
        expect((await cancelNow(m.membershipId)).status).toBe(200);
        await deliver(deleted(), paid(renewal), paid(renewal));
      }
      const membership = await membershipOf(m.membershipId);
      const events = await timeline(m.membershipId);
      const row = await t.deps.db.membershipInvoice.findUniqueOrThrow({ where: { stripeInvoiceId: renewal.id } });
      const periodEnd = new Date(renewal.lines.data[0]!.period.end * 1000).toISOString();
      expect(membership).toMatchObject({ status: 'ended', endReason: 'cancelled_by_staff' });
      // The renewal counts: paid through its period, as membership.ended says.
      expect(membership.expiresAt!.toISOString()).toBe(periodEnd);
      expect(events.at(-1)!.data).toMatchObject({ reason: 'cancelled_by_staff', paid_through: periodEnd });
      expect(events.find((event) => event.name === 'membership.renewed')!.data).toMatchObject({
        invoice_id: renewal.id,
        period_end: periodEnd,
      });
      expect(row).toMatchObject({ status: 'paid', reviewReason: null, refundedAt: null });
      expect(fake.refunds.filter((refund) => refund.metadata.invoice_id === renewal.id)).toEqual([]);
      return {
        mode,
        names: events.map((event) => event.name),
        reasons: events
          .filter((event) => event.name === 'membership.payment_succeeded')
          .map((event) => event.data.billing_reason),
      };
    };
    const outcomes = [
      await scenario('notified first'),
      await scenario('cancel first'),
      await scenario('together'),
      await scenario('cancel, deletion, duplicates'),
    ];
    for (const outcome of outcomes) {
      expect(outcome).toEqual({
        mode: outcome.mode,
        names: [
          'membership.subscription_started',
          'membership.payment_succeeded',
          'membership.payment_succeeded',
          'membership.renewed',
          'membership.ended',
        ],
        reasons: ['create', 'cycle'],
      });
    }
  });

  it('when a subscription ended before any of its notifications is handled and they arrive reversed, then the first payment it kept is still recorded before membership.ended, with paid_through its period end', async () => {
    const m = await pendingRecurringMembership(t.deps.db, fake, demo.tenant.id);
    const first = fake.billing.payFirstInvoice(m.subscriptionId);
    await fakeStripeClient(fake).subscriptions.cancel(m.subscriptionId);
    const deleted = structuredClone(fake.billing.subscriptions.get(m.subscriptionId)!);
    await deliver(subscriptionEvent('customer.subscription.deleted', deleted), paid(first.invoice));
    const periodEnd = new Date(first.invoice.lines.data[0]!.period.end * 1000).toISOString();
    const events = await timeline(m.membershipId);
    expect(events.map((event) => event.name)).toEqual([
      'membership.subscription_started',
      'membership.payment_succeeded',
      'membership.ended',
    ]);
    expect(events[2]!.data).toMatchObject({ reason: 'provider', paid_through: periodEnd });
    expect((await membershipOf(m.membershipId)).expiresAt!.toISOString()).toBe(periodEnd);
    expect(await t.deps.db.order.findUniqueOrThrow({ where: { id: m.orderId } })).toMatchObject({ status: 'paid' });
  });

  it('when an older read of the subscription (past_due) is converged after a newer one (paid, active), then the status stays active and membership.past_due is recorded once', async () => {
    const m = await activeMembership();
    const cycled = fake.billing.cycle(m.subscriptionId, { outcome: 'failed' });
    await deliver(failed(cycled.invoice!));
    expect(await membershipOf(m.membershipId)).toMatchObject({ status: 'past_due' });
    // A subscription.updated notification reads the subscription while it is past due...
    const keptAt = new Date();
    const kept = await retrieveSubscription(t.deps.stripe!, m.subscriptionId);
    expect(kept.status).toBe('past_due');
    // ...the member pays and that notification is handled first...
    const recovered = fake.billing.retryInvoice(cycled.invoice!.id, { outcome: 'paid' });
    await deliver(paid(recovered.invoice));
    expect(await membershipOf(m.membershipId)).toMatchObject({ status: 'active' });
    // ...then the older read commits.
    const result = await syncMembership(
      { db: t.deps.db, config: t.deps.config, stripe: t.deps.stripe! },
      { subscriptionId: m.subscriptionId, read: { subscription: kept, at: keptAt } },
    );
    expect(result.transition).toBeNull();
    expect(await membershipOf(m.membershipId)).toMatchObject({ status: 'active', graceEndsAt: null });
    expect(await eventCounts(m.membershipId)).toMatchObject({
      'membership.past_due': 1,
      'membership.payment_failed': 1,
      'membership.renewed': 1,
    });
    // A read taken after that one converges again as usual.
    await deliver(
      subscriptionEvent('customer.subscription.updated', fake.billing.subscriptions.get(m.subscriptionId)!),
    );
    expect(await membershipOf(m.membershipId)).toMatchObject({ status: 'active' });
    expect(await events(m.membershipId, 'membership.past_due')).toHaveLength(1);
  });

  it('when the renewal at the new plan price is paid and applied while a withdrawal swaps the old price back, then the withdrawal is 404 and the subscription is put back on the new price the membership now has', async () => {
    const m = await activeMembership();
    const stripe = fakeStripeClient(fake);
    const plan = await t.deps.db.membershipPlan.findUniqueOrThrow({ where: { id: m.planId } });
    const product = await stripe.products.create({ name: 'Plus' });
    const plusPrice = await stripe.prices.create({
      product: product.id,
      unit_amount: 4_000,
      currency: 'eur',
      recurring: { interval: 'month' },
    });
    const plus = await seedMembershipPlan(t.deps.db, demo.tenant.id, {
      billing: 'recurring',
      priceCents: 4_000,
      currency: 'EUR',
      interval: plan.interval,
      stripePriceId: plusPrice.id,
    });
    const asked = await request(t.app)
      .post(`/api/v1/memberships/${m.membershipId}/plan-change`)
      .set('Authorization', bearer(demo.api_keys.manager))
      .send({ to_plan_id: plus.id, when: 'period_end' });
    expect(asked.status).toBe(201);
    const itemPrice = () => fake.billing.subscriptions.get(m.subscriptionId)!.items.data[0]!.price.id;
    expect(itemPrice()).toBe(plusPrice.id);
    // The renewal bills the new price; its notification is handled while the withdrawal is at Stripe.
    const { invoice } = fake.billing.cycle(m.subscriptionId, { outcome: 'paid' });
    const racing = fakeStripeClient(fake);
    const update = racing.subscriptions.update.bind(racing.subscriptions);
    let interleaved = false;
    racing.subscriptions.update = (async (...args: Parameters<typeof update>) => {
      const answer = await update(...args);
      if (!interleaved) {
        interleaved = true;
        await deliver(paid(invoice!));
      }
      return answer;
    }) as typeof racing.subscriptions.update;

    const keyId = await keyIdOf(t, demo.api_keys.manager);
    await expect(
      withdrawPlanChange(
        { db: t.deps.db, stripe: racing as Stripe },
        { tenantId: demo.tenant.id, keyId, requestedBy: 'staff' },
        m.membershipId,
      ),
    ).rejects.toMatchObject({ code: 'change_not_found' });
    expect(interleaved).toBe(true);
    const membership = await membershipOf(m.membershipId);
    expect(membership).toMatchObject({ planId: plus.id, stripePriceId: plusPrice.id, priceCents: 4_000 });
    expect(itemPrice()).toBe(plusPrice.id);
    const change = await t.deps.db.membershipChange.findUniqueOrThrow({ where: { id: asked.body.change_id } });
    expect(change).toMatchObject({ status: 'applied', invoiceId: invoice!.id });
    expect(await events(m.membershipId, 'membership.plan_changed')).toHaveLength(1);
    expect(await events(m.membershipId, 'membership.plan_change_cancelled')).toHaveLength(0);
  });
});

import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import {
  bearer,
  createTestApp,
  deliverStripeEvent,
  type FakeInvoice,
  type FakeStripe,
  type FakeSubscription,
  keyIdOf,
  pendingRecurringMembership,
  seedMembership,
  seedMembershipPlan,
  seedTenant,
  signedBillingEvent,
  startFakeStripe,
  stopFakeStripe,
  stripeEnv,
  TEST_WEBHOOK_SECRET,
  type TestApp,
} from '@booking/test-kit';
import { issueManageToken } from '../src/memberships/member-token';

// Ending memberships: POST /api/v1/memberships/{id}/cancel by staff and by the member, the
// provider's later notifications, and a renewal paid while the cancel is asked for, on two API
// instances at once: one membership.ended, and the renewal's money given back.

let fake: FakeStripe;
let t: TestApp;
let second: TestApp;
let demo: DemoTenant;
let other: DemoTenant;
let managerKeyId: string;

beforeAll(async () => {
  fake = await startFakeStripe();
  t = createTestApp(stripeEnv(fake.url));
  second = createTestApp(stripeEnv(fake.url));
  demo = await seedTenant(t.deps);
  other = await seedTenant(t.deps);
  managerKeyId = await keyIdOf(t, demo.api_keys.manager);
});
afterAll(async () => {
  await second.close();
  await t.close();
  await stopFakeStripe(fake);
});

const paid = (invoice: FakeInvoice) => signedBillingEvent('invoice.paid', invoice, { secret: TEST_WEBHOOK_SECRET });
const deleted = (subscriptionId: string) =>
  signedBillingEvent('customer.subscription.deleted', fake.billing.subscriptions.get(subscriptionId)!, {
    secret: TEST_WEBHOOK_SECRET,
  });

async function deliver(app: TestApp, event: { payload: string; signature: string }) {
  const answer = await deliverStripeEvent(app, event);
  expect(answer.status).toBe(200);
}

const cancel = (app: TestApp, membershipId: string, body: unknown, key = demo.api_keys.manager) =>
  request(app.app)
    .post(`/api/v1/memberships/${membershipId}/cancel`)
    .set('Authorization', bearer(key))
    .send(body as object);

const endedEvents = (membershipId: string) =>
  t.deps.db.event.findMany({ where: { entityId: membershipId, name: 'membership.ended' } });
const membershipOf = (id: string) => t.deps.db.membership.findUniqueOrThrow({ where: { id } });

/**
 * A renewal whose period began a minute ago (the fake has no clock: its next period starts when
 * the one paid for ends, in the future), so that a cancel now comes after the period started.
 */
function startedMinuteAgo(cycled: { subscription: FakeSubscription; invoice: FakeInvoice | null }) {
  const minuteAgo = Math.floor(Date.now() / 1000) - 60;
  const invoice = fake.billing.invoices.get(cycled.invoice!.id)!;
  for (const line of invoice.lines.data) line.period.start = minuteAgo;
  const subscription = fake.billing.subscriptions.get(cycled.subscription.id)!;
  subscription.items.data[0]!.current_period_start = minuteAgo;
  return { subscription: structuredClone(subscription), invoice: structuredClone(invoice) };
}

async function activeMembership() {
  const m = await pendingRecurringMembership(t.deps.db, fake, demo.tenant.id);
  await deliver(t, paid(fake.billing.payFirstInvoice(m.subscriptionId).invoice));
  return m;
}

describe('cancelling a membership', () => {
  it('when staff cancel at period end, then the subscription stops renewing, and when the provider ends it, membership.ended{cancelled_by_staff} names the staff user, once', async () => {
    const m = await activeMembership();
    const answer = await cancel(t, m.membershipId, { at: 'period_end', reason: 'moving away' });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      id: m.membershipId,
      billing: 'recurring',
      status: 'active',
      cancel_at_period_end: true,
      end_requested_by: 'staff',
      ended_at: null,
    });
    expect(fake.billing.subscriptions.get(m.subscriptionId)!.cancel_at_period_end).toBe(true);
    expect(await endedEvents(m.membershipId)).toHaveLength(0);

    const { subscription } = fake.billing.cycle(m.subscriptionId, { outcome: 'paid' });
    expect(subscription.status).toBe('canceled');
    const event = deleted(m.subscriptionId);
    await deliver(t, event);
    await deliver(t, deleted(m.subscriptionId));
    const membership = await membershipOf(m.membershipId);
    expect(membership).toMatchObject({ status: 'ended', endReason: 'cancelled_by_staff' });
    expect((await endedEvents(m.membershipId)).map((e) => e.data)).toEqual([
      expect.objectContaining({
        reason: 'cancelled_by_staff',
        actor_user_id: managerKeyId,
        paid_through: membership.expiresAt!.toISOString(),
      }),
    ]);
  });

  it('when the member cancels with their token, then only at period end, and the end is theirs', async () => {
    const m = await activeMembership();
    const token = issueManageToken(t.deps.config, { id: m.membershipId, tenantId: demo.tenant.id, tokenVersion: 1 });
    const now = await request(t.app)
      .post(`/api/v1/memberships/${m.membershipId}/cancel`)
      .set('X-Membership-Token', token)
      .send({ at: 'now' });
    expect(now.status).toBe(403);
    expect(now.body.error).toBe('forbidden');

    const answer = await request(t.app)
      .post(`/api/v1/memberships/${m.membershipId}/cancel`)
      .set('X-Membership-Token', token)
      .send({ at: 'period_end' });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ status: 'active', cancel_at_period_end: true, end_requested_by: 'member' });

    fake.billing.cycle(m.subscriptionId, { outcome: 'paid' });
    await deliver(t, deleted(m.subscriptionId));
    expect((await endedEvents(m.membershipId)).map((e) => e.data)).toEqual([
      expect.objectContaining({ reason: 'cancelled_by_member', actor_user_id: null }),
    ]);
  });

  it('when the member has set the end at period end and staff then end it now, then the end is the staff’s: membership.ended{cancelled_by_staff} with the staff key, once', async () => {
    const m = await activeMembership();
    const token = issueManageToken(t.deps.config, await membershipOf(m.membershipId));
    const byMember = await request(t.app)
      .post(`/api/v1/memberships/${m.membershipId}/cancel`)
      .set('X-Membership-Token', token)
      .send({ at: 'period_end' });
    expect(byMember.status).toBe(200);
    expect(byMember.body).toMatchObject({ status: 'active', end_requested_by: 'member' });

    const byStaff = await cancel(t, m.membershipId, { at: 'now' });
    expect(byStaff.status).toBe(200);
    expect(byStaff.body).toMatchObject({
      status: 'ended',
      end_reason: 'cancelled_by_staff',
      end_requested_by: 'staff',
    });
    expect(new Date(byStaff.body.end_requested_at).getTime()).toBeGreaterThan(
      new Date(byMember.body.end_requested_at).getTime(),
    );
    await deliver(t, deleted(m.subscriptionId));
    const membership = await membershipOf(m.membershipId);
    // The end is now, no longer at period end: money paid from the staff's request on goes back.
    expect(membership).toMatchObject({
      endRequestedBy: 'staff',
      endRequestedKeyId: managerKeyId,
      periodEndRequestedAt: null,
    });
    expect((await endedEvents(m.membershipId)).map((e) => e.data)).toEqual([
      expect.objectContaining({ reason: 'cancelled_by_staff', actor_user_id: managerKeyId }),
    ]);
  });

  it('when the member cancels at period end and the current period is paid after that (a failed renewal retried, a renewal not yet collected, and after a staff end now the provider refused), then the payment is kept: the member has the period paid for, nothing is refunded, and membership.ended reports it as paid through', async () => {
    const down = createTestApp(stripeEnv('http://127.0.0.1:1'));
    const scenario = async (setup: 'retried' | 'not yet collected' | 'staff refused') => {
      const m = await activeMembership();
      const cycled = startedMinuteAgo(
        fake.billing.cycle(m.subscriptionId, setup === 'not yet collected' ? 'later' : { outcome: 'failed' }),
      );
      if (setup !== 'not yet collected') {
        await deliver(
          t,
          signedBillingEvent('invoice.payment_failed', cycled.invoice!, { secret: TEST_WEBHOOK_SECRET }),
        );
        expect((await membershipOf(m.membershipId)).status).toBe('past_due');
      }
      const token = issueManageToken(t.deps.config, await membershipOf(m.membershipId));
      const byMember = await request(t.app)
        .post(`/api/v1/memberships/${m.membershipId}/cancel`)
        .set('X-Membership-Token', token)
        .send({ at: 'period_end' });
      expect(byMember.status).toBe(200);
      if (setup === 'staff refused') {
        const refused = await cancel(down, m.membershipId, { at: 'now' });
        expect(refused.status).toBeGreaterThanOrEqual(500);
        expect(await membershipOf(m.membershipId)).toMatchObject({
          status: 'past_due',
          endRequestedAt: new Date(byMember.body.end_requested_at),
          endRequestedBy: 'member',
          periodEndRequestedAt: new Date(byMember.body.end_requested_at),
        });
      }

      const { invoice } = fake.billing.retryInvoice(cycled.invoice!.id, { outcome: 'paid' });
      await deliver(t, paid(invoice));
      const period = cycled.subscription.items.data[0]!;
      const row = await t.deps.db.membershipInvoice.findUniqueOrThrow({ where: { stripeInvoiceId: invoice.id } });
      expect(row).toMatchObject({ status: 'paid', reviewReason: null, refundedAt: null });
      expect(await membershipOf(m.membershipId)).toMatchObject({
        status: 'active',
        cancelAtPeriodEnd: true,
        periodStart: new Date(period.current_period_start * 1000),
        expiresAt: new Date(period.current_period_end * 1000),
      });
      expect(
        (await t.deps.db.event.findMany({ where: { entityId: m.membershipId, name: 'membership.renewed' } })).map(
          (event) => event.data,
        ),
      ).toEqual([expect.objectContaining({ invoice_id: invoice.id })]);

      // Stripe ends it at the end of that period.
      expect(fake.billing.cycle(m.subscriptionId, { outcome: 'paid' }).subscription.status).toBe('canceled');
      await deliver(t, deleted(m.subscriptionId));
      expect((await endedEvents(m.membershipId)).map((event) => event.data)).toEqual([
        expect.objectContaining({
          reason: 'cancelled_by_member',
          paid_through: new Date(period.current_period_end * 1000).toISOString(),
        }),
      ]);
      expect(
        await t.deps.db.membershipInvoice.findUniqueOrThrow({ where: { stripeInvoiceId: invoice.id } }),
      ).toMatchObject({ reviewReason: null, refundedAt: null });
      expect(fake.refunds.filter((refund) => refund.metadata.invoice_id === invoice.id)).toEqual([]);
    };
    try {
      await scenario('retried');
      await scenario('not yet collected');
      await scenario('staff refused');
    } finally {
      await down.close();
    }
  });

  it('when staff end a membership now, then it ends at once with one membership.ended, the later deleted notification changes nothing, and a second request is 409', async () => {
    const m = await activeMembership();
    const answer = await cancel(t, m.membershipId, { at: 'now' });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ status: 'ended', end_reason: 'cancelled_by_staff', end_requested_by: 'staff' });
    expect(fake.billing.subscriptions.get(m.subscriptionId)!.status).toBe('canceled');
    await deliver(t, deleted(m.subscriptionId));
    const ended = await endedEvents(m.membershipId);
    expect(ended).toHaveLength(1);
    expect(ended[0]!.data).toMatchObject({ reason: 'cancelled_by_staff', actor_user_id: managerKeyId });

    const again = await cancel(t, m.membershipId, { at: 'now' });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('membership_not_active');
  });

  it('when a membership with a pending plan change and a booked freeze ends, then both end with it: plan_change_cancelled and freeze_cancelled (membership_ended), once each', async () => {
    const m = await activeMembership();
    const plan = await t.deps.db.membershipPlan.findUniqueOrThrow({ where: { id: m.planId } });
    const otherPlan = await seedMembershipPlan(t.deps.db, demo.tenant.id, { billing: 'recurring' });
    const { expiresAt } = await membershipOf(m.membershipId);
    const change = await t.deps.db.membershipChange.create({
      data: {
        membershipId: m.membershipId,
        kind: 'plan_change',
        status: 'pending',
        timing: 'period_end',
        fromPlanId: plan.id,
        toPlanId: otherPlan.id,
        fromPriceCents: plan.priceCents,
        toPriceCents: otherPlan.priceCents,
        effectiveAt: expiresAt!,
        requestedBy: 'staff',
        providerAppliedAt: new Date(),
      },
    });
    const day = expiresAt!.toISOString().slice(0, 10);
    const freeze = await t.deps.db.membershipFreeze.create({
      data: {
        membershipId: m.membershipId,
        startsOn: new Date(day),
        endsOn: new Date(day),
        status: 'booked',
        requestedBy: 'member',
      },
    });

    expect((await cancel(t, m.membershipId, { at: 'now' })).status).toBe(200);
    await deliver(t, deleted(m.subscriptionId));

    const events = (name: string) => t.deps.db.event.findMany({ where: { entityId: m.membershipId, name } });
    const changeCancelled = await events('membership.plan_change_cancelled');
    expect(changeCancelled.map((e) => e.data)).toEqual([
      expect.objectContaining({ change_id: change.id, reason: 'membership_ended', actor_user_id: null }),
    ]);
    const freezeCancelled = await events('membership.freeze_cancelled');
    expect(freezeCancelled.map((e) => e.data)).toEqual([
      expect.objectContaining({ freeze_id: freeze.id, was: 'booked', frozen_days: 0, reason: 'membership_ended' }),
    ]);
    expect((await t.deps.db.membershipChange.findUniqueOrThrow({ where: { id: change.id } })).status).toBe('cancelled');
    expect((await t.deps.db.membershipFreeze.findUniqueOrThrow({ where: { id: freeze.id } })).status).toBe('cancelled');
  });

  it('when the request is bad, for another tenant, not a manager, or for an unpaid membership, then 400, 404, 403 and 409, and the provider is not asked', async () => {
    const m = await activeMembership();
    const pending = await pendingRecurringMembership(t.deps.db, fake, demo.tenant.id);
    const cancels = () => fake.requestsTo('DELETE', `/v1/subscriptions/${m.subscriptionId}`).length;
    const before = cancels();

    const bad = await cancel(t, m.membershipId, { at: 'tomorrow' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('invalid_body');
    const foreign = await cancel(t, m.membershipId, { at: 'now' }, other.api_keys.admin);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error).toBe('membership_not_found');
    const notUuid = await cancel(t, 'nope', { at: 'now' });
    expect(notUuid.status).toBe(404);
    const staff = await cancel(t, m.membershipId, { at: 'now' }, demo.api_keys.staff);
    expect(staff.status).toBe(403);
    const unpaid = await cancel(t, pending.membershipId, { at: 'now' });
    expect(unpaid.status).toBe(409);
    expect(unpaid.body.error).toBe('membership_not_active');

    expect(cancels()).toBe(before);
    expect(await membershipOf(m.membershipId)).toMatchObject({ status: 'active', endRequestedAt: null });
  });

  it('when a fixed-term membership is cancelled, then now ends it at once (membership.ended, no refund, no provider call) and period_end lets it run to its expiry', async () => {
    const plan = await seedMembershipPlan(t.deps.db, demo.tenant.id, { billing: 'fixed_term' });
    const ending = await seedMembership(t.deps.db, plan);
    const running = await seedMembership(t.deps.db, plan);
    const requests = fake.requests.length;

    const now = await cancel(t, ending.id, { at: 'now', reason: 'injury' });
    expect(now.status).toBe(200);
    expect(now.body).toMatchObject({ billing: 'fixed_term', status: 'ended', end_reason: 'cancelled_by_staff' });
    expect((await endedEvents(ending.id)).map((e) => e.data)).toEqual([
      expect.objectContaining({
        reason: 'cancelled_by_staff',
        paid_through: ending.expiresAt!.toISOString(),
        actor_user_id: managerKeyId,
      }),
    ]);

    const later = await cancel(t, running.id, { at: 'period_end' });
    expect(later.status).toBe(200);
    expect(later.body).toMatchObject({ status: 'active', cancel_at_period_end: true, ended_at: null });
    expect(await endedEvents(running.id)).toHaveLength(0);
    expect(fake.requests.length).toBe(requests);
  });

  it('when a renewal is paid while staff end the membership (two API instances at once, and each order one after the other), then one membership.ended each, and the renewal is refunded once and never reopens it', async () => {
    const race = async (mode: 'together' | 'renewal first' | 'cancel first') => {
      const m = await activeMembership();
      const paidThroughBefore = (await membershipOf(m.membershipId)).expiresAt;
      const { invoice } = fake.billing.cycle(m.subscriptionId, { outcome: 'paid' });
      const notify = () => deliverStripeEvent(second, paid(invoice!));
      const end = () => cancel(t, m.membershipId, { at: 'now' });
      if (mode === 'together') {
        const [ended, notified] = await Promise.all([end(), notify()]);
        expect([ended.status, notified.status]).toEqual([200, 200]);
      } else if (mode === 'renewal first') {
        expect((await notify()).status).toBe(200);
        expect((await end()).status).toBe(200);
      } else {
        expect((await end()).status).toBe(200);
        expect((await notify()).status).toBe(200);
      }
      await deliver(t, deleted(m.subscriptionId));
      await deliver(second, paid(invoice!));
      return { m, invoice: invoice!, paidThroughBefore };
    };
    const runs = await Promise.all([
      race('together'),
      race('together'),
      race('together'),
      race('renewal first'),
      race('cancel first'),
    ]);
    for (const { m, invoice, paidThroughBefore } of runs) {
      const membership = await membershipOf(m.membershipId);
      expect(membership).toMatchObject({ status: 'ended', endReason: 'cancelled_by_staff' });
      expect(membership.expiresAt).toEqual(paidThroughBefore);
      expect(await endedEvents(m.membershipId)).toHaveLength(1);
      const row = await t.deps.db.membershipInvoice.findUniqueOrThrow({ where: { stripeInvoiceId: invoice.id } });
      expect(row.reviewReason).toBe('paid_after_end_requested');
      expect(row.refundedAt).not.toBeNull();
      const refunds = fake.refunds.filter((refund) => refund.metadata.invoice_id === invoice.id);
      expect(refunds.map((refund) => refund.amount)).toEqual([2500]);
    }
  });
});

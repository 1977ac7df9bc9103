import { randomUUID } from 'node:crypto';
import type { DemoTenant } from '@booking/db';
import { createTestApp, seedMembership, seedMembershipPlan, seedTenant, type TestApp } from '@booking/test-kit';
import { applyPaidChange } from '../src/membership-changes/apply-paid-change';
import { ANY_TENANT, lockMembership } from '../src/locks';

// applyPaidChange on the real PostgreSQL: the paid invoice at a pending change's new price applies
// it once (plan changes say so in membership.plan_changed, price changes silently); any other
// invoice, or a period_end change whose time has not come, changes nothing.

let t: TestApp;
let demo: DemoTenant;

beforeAll(async () => {
  t = createTestApp();
  demo = await seedTenant(t.deps);
});
afterAll(() => t.close());

const DAY = 86_400_000;

async function setUp(kind: 'plan_change' | 'price_change', timing: 'now' | 'period_end') {
  const from = await seedMembershipPlan(t.deps.db, demo.tenant.id, { billing: 'recurring', priceCents: 3_000 });
  const to =
    kind === 'plan_change'
      ? await seedMembershipPlan(t.deps.db, demo.tenant.id, { billing: 'recurring', priceCents: 5_000 })
      : from;
  const membership = await seedMembership(t.deps.db, from);
  const toPriceId = kind === 'plan_change' ? to.stripePriceId! : `price_${randomUUID().replaceAll('-', '')}`;
  const change = await t.deps.db.membershipChange.create({
    data: {
      membershipId: membership.id,
      kind,
      status: 'pending',
      timing,
      fromPlanId: from.id,
      toPlanId: to.id,
      fromPriceId: from.stripePriceId,
      toPriceId,
      fromPriceCents: 3_000,
      toPriceCents: kind === 'plan_change' ? 5_000 : 3_500,
      effectiveAt: timing === 'now' ? new Date() : membership.expiresAt!,
      requestedBy: 'staff',
      providerAppliedAt: new Date(),
    },
  });
  return { from, to, membership, change, toPriceId };
}

async function pay(membershipId: string, invoice: Parameters<typeof applyPaidChange>[2]) {
  await t.deps.db.$transaction(async (tx) => {
    const locked = (await lockMembership(tx, ANY_TENANT, membershipId))!;
    await applyPaidChange(tx, locked, invoice);
  });
}

const planChanged = (membershipId: string) =>
  t.deps.db.event.findMany({
    where: { tenantId: demo.tenant.id, name: 'membership.plan_changed', entityId: membershipId },
  });

describe('applyPaidChange', () => {
  it('when the renewal invoice at the new plan price is paid (twice), then the plan change is applied once and membership.plan_changed is recorded once', async () => {
    const { from, to, membership, change, toPriceId } = await setUp('plan_change', 'period_end');
    const invoice = {
      invoiceId: 'in_renewal_1',
      priceId: toPriceId,
      periodStart: membership.expiresAt!,
      amountCents: 5_000,
    };
    await pay(membership.id, invoice);
    await pay(membership.id, invoice);
    const after = await t.deps.db.membership.findUniqueOrThrow({ where: { id: membership.id } });
    expect(after).toMatchObject({ planId: to.id, priceCents: 5_000, stripePriceId: toPriceId });
    const row = await t.deps.db.membershipChange.findUniqueOrThrow({ where: { id: change.id } });
    expect(row).toMatchObject({ status: 'applied', invoiceId: 'in_renewal_1' });
    expect(row.resolvedAt).not.toBeNull();
    const events = await planChanged(membership.id);
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toMatchObject({
      membership_id: membership.id,
      plan_id: to.id,
      change_id: change.id,
      from_plan_id: from.id,
      to_plan_id: to.id,
      invoice_id: 'in_renewal_1',
      amount_cents: 5_000,
      effective_at: membership.expiresAt!.toISOString(),
    });
  });

  it('when an invoice at the old price, or a period_end change paid before its time, is paid, then nothing changes', async () => {
    const { from, membership, change, toPriceId } = await setUp('plan_change', 'period_end');
    await pay(membership.id, {
      invoiceId: 'in_old',
      priceId: from.stripePriceId,
      periodStart: membership.expiresAt!,
      amountCents: 3_000,
    });
    await pay(membership.id, {
      invoiceId: 'in_null',
      priceId: null,
      periodStart: membership.expiresAt!,
      amountCents: 0,
    });
    await pay(membership.id, {
      invoiceId: 'in_early',
      priceId: toPriceId,
      periodStart: new Date(membership.expiresAt!.getTime() - 20 * DAY),
      amountCents: 5_000,
    });
    expect((await t.deps.db.membershipChange.findUniqueOrThrow({ where: { id: change.id } })).status).toBe('pending');
    expect((await t.deps.db.membership.findUniqueOrThrow({ where: { id: membership.id } })).planId).toBe(from.id);
    expect(await planChanged(membership.id)).toHaveLength(0);
  });

  it('when the proration invoice of an upgrade made now is paid, then the change is applied at once with the amount charged', async () => {
    const { to, membership, change, toPriceId } = await setUp('plan_change', 'now');
    await pay(membership.id, {
      invoiceId: 'in_upgrade',
      priceId: toPriceId,
      periodStart: new Date(),
      amountCents: 1_234,
    });
    expect((await t.deps.db.membership.findUniqueOrThrow({ where: { id: membership.id } })).planId).toBe(to.id);
    expect((await t.deps.db.membershipChange.findUniqueOrThrow({ where: { id: change.id } })).status).toBe('applied');
    const events = await planChanged(membership.id);
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toMatchObject({ invoice_id: 'in_upgrade', amount_cents: 1_234, change_id: change.id });
  });

  it('when the upgrade invoice is notified before the request recorded the change as requested, then plan_change_requested comes first, once', async () => {
    const { membership, change, toPriceId } = await setUp('plan_change', 'now');
    await t.deps.db.membershipChange.update({ where: { id: change.id }, data: { providerAppliedAt: null } });
    await pay(membership.id, {
      invoiceId: 'in_quick',
      priceId: toPriceId,
      periodStart: new Date(),
      amountCents: 2_000,
    });
    const names = (
      await t.deps.db.event.findMany({ where: { entityId: membership.id }, orderBy: { createdAt: 'asc' } })
    ).map((e) => e.name);
    expect(names).toEqual(['membership.plan_change_requested', 'membership.plan_changed']);
    expect(
      (await t.deps.db.membershipChange.findUniqueOrThrow({ where: { id: change.id } })).providerAppliedAt,
    ).not.toBeNull();
  });

  it('when the renewal at a scheduled new price is paid, then the price change applies silently (no event)', async () => {
    const { from, membership, change, toPriceId } = await setUp('price_change', 'period_end');
    await pay(membership.id, {
      invoiceId: 'in_price',
      priceId: toPriceId,
      periodStart: membership.expiresAt!,
      amountCents: 3_500,
    });
    const after = await t.deps.db.membership.findUniqueOrThrow({ where: { id: membership.id } });
    expect(after).toMatchObject({ planId: from.id, priceCents: 3_500, stripePriceId: toPriceId });
    expect((await t.deps.db.membershipChange.findUniqueOrThrow({ where: { id: change.id } })).status).toBe('applied');
    expect(await planChanged(membership.id)).toHaveLength(0);
    expect(await t.deps.db.event.count({ where: { entityId: membership.id } })).toBe(0);
  });
});

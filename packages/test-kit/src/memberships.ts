import { randomUUID } from 'node:crypto';
import type { Db, MembershipBilling, MembershipStatus } from '@booking/db';

// Plans and memberships written straight to the database, for tests of what members do with a
// membership they already have (uses, freezes, changes, holders, jobs). Purchases are tested
// through the API; these rows have the shape a paid purchase leaves.

export interface PlanOptions {
  billing?: MembershipBilling;
  name?: string;
  priceCents?: number;
  currency?: string;
  termDays?: number | null;
  termMonths?: number | null;
  interval?: 'month' | 'year' | null;
  allowancePeriod?: 'month' | 'term';
  visitsPerPeriod?: number | null;
  guestPassesPerPeriod?: number;
  memberDiscountPercent?: number;
  freezeAllowed?: boolean;
  freezeMinDays?: number;
  freezeMaxDays?: number;
  freezesPerYear?: number;
  freezeNoticeDays?: number;
  freezeFeeCents?: number;
  transferable?: boolean;
  requiresPhoto?: boolean;
  stripePriceId?: string | null;
  benefits?: { name: string; quantityPerPeriod: number | null }[];
}

/** A plan of the tenant: fixed-term 365 days by default, or recurring monthly. */
export async function seedMembershipPlan(db: Db, tenantId: string, options: PlanOptions = {}) {
  const billing = options.billing ?? 'fixed_term';
  const recurring = billing === 'recurring';
  return db.membershipPlan.create({
    data: {
      tenantId,
      billing,
      name: options.name ?? `Plan ${randomUUID().slice(0, 8)}`,
      priceCents: options.priceCents ?? 9_900,
      currency: options.currency ?? 'EUR',
      termDays: recurring
        ? null
        : options.termDays === undefined
          ? options.termMonths
            ? null
            : 365
          : options.termDays,
      termMonths: recurring ? null : (options.termMonths ?? null),
      interval: recurring ? (options.interval ?? 'month') : null,
      stripePriceId: options.stripePriceId ?? (recurring ? `price_${randomUUID().replaceAll('-', '')}` : null),
      allowancePeriod: options.allowancePeriod ?? 'month',
      visitsPerPeriod: options.visitsPerPeriod === undefined ? 4 : options.visitsPerPeriod,
      guestPassesPerPeriod: options.guestPassesPerPeriod ?? 2,
      memberDiscountPercent: options.memberDiscountPercent ?? 10,
      freezeAllowed: options.freezeAllowed ?? true,
      freezeMinDays: options.freezeMinDays ?? 7,
      freezeMaxDays: options.freezeMaxDays ?? 90,
      freezesPerYear: options.freezesPerYear ?? 2,
      freezeNoticeDays: options.freezeNoticeDays ?? 0,
      freezeFeeCents: options.freezeFeeCents ?? 0,
      transferable: options.transferable ?? true,
      requiresPhoto: options.requiresPhoto ?? false,
      benefits: { create: options.benefits ?? [{ name: 'Coffee', quantityPerPeriod: 2 }] },
    },
    include: { benefits: true },
  });
}

export interface MembershipOptions {
  status?: MembershipStatus;
  email?: string;
  startsAt?: Date;
  expiresAt?: Date | null;
  stripeSubscriptionId?: string | null;
  stripeCustomerId?: string | null;
}

/**
 * A membership of `plan` for a new customer of the tenant (owner and holder), active from a day
 * ago for the plan's term (or a month, for recurring plans) unless told otherwise.
 */
export async function seedMembership(
  db: Db,
  plan: {
    id: string;
    tenantId: string;
    billing: MembershipBilling;
    priceCents: number;
    currency: string;
    stripePriceId: string | null;
  },
  options: MembershipOptions = {},
) {
  const customer = await db.customer.create({
    data: {
      tenantId: plan.tenantId,
      email: options.email ?? `member-${randomUUID()}@example.com`,
      firstName: 'Member',
    },
  });
  const startsAt = options.startsAt ?? new Date(Date.now() - 86_400_000);
  const expiresAt =
    options.expiresAt === undefined
      ? new Date(startsAt.getTime() + (plan.billing === 'recurring' ? 30 : 365) * 86_400_000)
      : options.expiresAt;
  const recurring = plan.billing === 'recurring';
  return db.membership.create({
    data: {
      tenantId: plan.tenantId,
      planId: plan.id,
      billing: plan.billing,
      source: 'online',
      customerId: customer.id,
      holderCustomerId: customer.id,
      status: options.status ?? 'active',
      startsAt,
      expiresAt,
      periodStart: startsAt,
      priceCents: plan.priceCents,
      currency: plan.currency,
      stripePriceId: plan.stripePriceId,
      stripeSubscriptionId:
        options.stripeSubscriptionId === undefined
          ? recurring
            ? `sub_${randomUUID().replaceAll('-', '')}`
            : null
          : options.stripeSubscriptionId,
      stripeCustomerId:
        options.stripeCustomerId === undefined
          ? recurring
            ? `cus_${randomUUID().replaceAll('-', '')}`
            : null
          : options.stripeCustomerId,
    },
  });
}

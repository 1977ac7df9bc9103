import type { Membership, MembershipPlan, Prisma, Tx, UsageKind } from '@booking/db';
import { AppError } from '@booking/domain';
import { termExpiry } from '../membership-sales/membership-term';
import { placeUses } from './place-uses';

/**
 * An allowance period: the uses that count against it are those whose `countsAt` falls in
 * [start, end). A null bound is open.
 */
export interface AllowancePeriod {
  /** Its name in answers and events: `2026-11`, or `term-<day it starts>`. */
  key: string;
  start: Date | null;
  end: Date | null;
}

type PeriodPlan = Pick<MembershipPlan, 'allowancePeriod' | 'interval' | 'intervalCount'>;
type PeriodMembership = Pick<Membership, 'billing' | 'periodStart' | 'startsAt' | 'createdAt' | 'expiresAt'>;

/**
 * The allowance period that contains `at` (a visit's slot start, or now for any other use).
 * `month` plans count by calendar month (UTC). `term` plans count by the membership's term or
 * billing period: a fixed term is one period however far a freeze moves its end; a recurring
 * membership's current period is [period_start, expires_at), and the periods after it are
 * predicted from the plan's interval, so a visit booked ahead counts in the period it will fall
 * in. Counting by the instant rather than by a key fixed at booking time is what keeps a renewal
 * (or a freeze that moves the periods) from handing out those days' allowance again: the
 * renewed period's uses are whatever falls in its real bounds.
 */
export function allowancePeriodAt(plan: PeriodPlan, membership: PeriodMembership, at: Date): AllowancePeriod {
  if (plan.allowancePeriod === 'month') {
    const [year, month] = [at.getUTCFullYear(), at.getUTCMonth()];
    return {
      key: at.toISOString().slice(0, 7),
      start: new Date(Date.UTC(year, month, 1)),
      end: new Date(Date.UTC(year, month + 1, 1)),
    };
  }
  const start = currentStart(membership);
  if (membership.billing === 'fixed_term') return termPeriod(start, null, null);
  // Not paid for yet (no period end): nothing to step from, and nothing can be used.
  if (!membership.expiresAt || !plan.interval) return termPeriod(start, start, null);
  const months = plan.intervalCount * (plan.interval === 'year' ? 12 : 1);
  return billingPeriodAt({ start, end: membership.expiresAt }, months, at);
}

/**
 * The allowance period a visit at `at` counts against, refused when it is not open for booking
 * yet: a visit counts against the current period or the next one, never a later one (409
 * allowance_exhausted, `remaining` 0, `opens_at`: when the period before it starts). The current
 * period is this calendar month (`now`) for month plans, and the billing period paid for
 * (period_start to expires_at) for a recurring membership counting by billing period: one
 * renewal ahead of what is paid. Each period has an allowance of its own, so without this limit
 * one period paid for, then cancelled, could book every later period's allowance and keep those
 * visits. A fixed term is one period, closed by its end (visit-coverage.ts).
 */
export function visitPeriodAt(plan: PeriodPlan, membership: PeriodMembership, at: Date, now: Date): AllowancePeriod {
  const period = allowancePeriodAt(plan, membership, at);
  const current = allowancePeriodAt(
    plan,
    membership,
    plan.allowancePeriod === 'month' ? now : currentStart(membership),
  );
  if (current.end === null || period.start === null) return period;
  const next = allowancePeriodAt(plan, membership, current.end);
  if (next.end === null || at < next.end) return period;
  const before = allowancePeriodAt(plan, membership, new Date(period.start.getTime() - 1));
  throw new AppError('allowance_exhausted', {
    kind: 'visit',
    remaining: 0,
    period_key: period.key,
    opens_at: before.start?.toISOString() ?? null,
  });
}

/** When the membership's current term or billing period started. */
function currentStart(membership: PeriodMembership): Date {
  return membership.periodStart ?? membership.startsAt ?? membership.createdAt;
}

function termPeriod(named: Date, start: Date | null, end: Date | null): AllowancePeriod {
  return { key: `term-${named.toISOString().slice(0, 10)}`, start, end };
}

/**
 * The billing period containing `at`, stepping from the current one by the plan's interval.
 * The provider counts every boundary from its billing anchor: the same day of the month (and
 * time), or the last day of a shorter month. A bound in a shorter month has lost the anchor's
 * day (anchored on the 31st: Feb 28, Mar 31, Apr 30), so steps are counted from the bound with
 * the later day of the month, which keeps it: for monthly billing one of two consecutive months
 * has 31 days, so that bound is always on the anchor's day. (A longer interval with both bounds
 * at the end of short months, such as quarters anchored on the 31st from June 30 to September
 * 30, predicts the next boundary a day early: counted like any period end off the prediction.)
 */
function billingPeriodAt(current: { start: Date; end: Date }, months: number, at: Date): AllowancePeriod {
  // Boundary n: the current start is boundary 0, its end boundary 1.
  const [anchor, anchorIndex] =
    current.end.getUTCDate() > current.start.getUTCDate() ? [current.end, 1] : [current.start, 0];
  const boundary = (n: number) => termExpiry(anchor, { termDays: null, termMonths: (n - anchorIndex) * months });
  let [start, end] = [current.start, current.end];
  for (let n = 2; at >= end; n += 1) {
    const next = boundary(n);
    if (next > end) [start, end] = [end, next];
  }
  for (let n = -1; at < start; n -= 1) [start, end] = [boundary(n), start];
  return termPeriod(start, start, end);
}

/** Whether a use counting at `at` belongs to `period`. */
export function isInPeriod(period: AllowancePeriod, at: Date): boolean {
  return (period.start === null || at >= period.start) && (period.end === null || at < period.end);
}

/**
 * What the membership has used of one allowance in a period: reserved and consumed uses whose
 * instant falls in it, counted from the rows (never a counter), after placing any use an older
 * pod left without its instant (place-uses.ts). Call it with the membership locked, so two uses
 * of the last allowance queue and the second sees the first.
 */
export async function usedInPeriod(
  tx: Tx,
  where: { membershipId: string; kind: UsageKind; period: AllowancePeriod; benefitId?: string },
): Promise<number> {
  await placeUses(tx, where.membershipId);
  const countsAt: Prisma.DateTimeFilter<'MembershipUsage'> = {
    ...(where.period.start && { gte: where.period.start }),
    ...(where.period.end && { lt: where.period.end }),
  };
  const { _sum } = await tx.membershipUsage.aggregate({
    _sum: { quantity: true },
    where: {
      membershipId: where.membershipId,
      kind: where.kind,
      countsAt,
      ...(where.benefitId && { benefitId: where.benefitId }),
      status: { in: ['reserved', 'consumed'] },
    },
  });
  return _sum.quantity ?? 0;
}

/**
 * What is left of an allowance of `cap` (null: unlimited) after `wanted` more, refusing with 409
 * allowance_exhausted when it would go below zero. Returns null for an unlimited allowance.
 */
export function remainingAfter(
  kind: UsageKind,
  cap: number | null,
  used: number,
  wanted: number,
  period: AllowancePeriod,
): number | null {
  if (cap === null) return null;
  const remaining = cap - used - wanted;
  if (remaining < 0) {
    throw new AppError('allowance_exhausted', { kind, remaining: Math.max(0, cap - used), period_key: period.key });
  }
  return remaining;
}

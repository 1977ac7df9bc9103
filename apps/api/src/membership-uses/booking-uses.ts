import type { Config } from '@booking/config';
import type { Tx } from '@booking/db';
import { AppError, assertMembershipAllows } from '@booking/domain';
import { recordEvent } from '@booking/events';
import { lockMembership, type LockedMembership } from '../locks';
import { remainingAfter, usedInPeriod, visitPeriodAt, type AllowancePeriod } from '../memberships/allowances';
import { readMemberToken } from '../memberships/member-token';
import { assertHolderPhotoCaptured } from './holder-photo';
import { assertCoversVisit } from './visit-coverage';

/** A membership presented with a booking request: whose it is, by its token, and the guests it covers. */
export interface PresentedMembership {
  membershipId: string;
  tokenVersion: number;
  guestPasses: number;
}

/** Visits a booking takes from the allowance: the member's own admission, whatever the party size. */
export const VISITS_PER_BOOKING = 1;

/**
 * Reads the request's membership_token (400 member_token_invalid when forged, expired or of
 * another tenant) and checks guest_passes against the party: the member is one of the guests,
 * so at most guest_count - 1 come on guest passes. Before any lock: a bad token costs nothing.
 */
export function presentedMembership(
  config: Config,
  tenantId: string,
  request: { membership_token?: string; guest_passes?: number; guest_count: number },
): PresentedMembership | null {
  const guestPasses = request.guest_passes ?? 0;
  if (request.membership_token === undefined) {
    if (guestPasses > 0) {
      throw new AppError('invalid_body', [{ field: '/guest_passes', message: 'needs a membership_token' }]);
    }
    return null;
  }
  if (guestPasses > request.guest_count - 1) {
    throw new AppError('invalid_body', [
      { field: '/guest_passes', message: 'must be at most guest_count - 1: the member is one of the guests' },
    ]);
  }
  return { ...readMemberToken(config, tenantId, request.membership_token), guestPasses };
}

/** What a presented membership gives a booking, decided under the membership's lock. */
export interface MemberBookingTerms {
  membership: LockedMembership;
  guestPasses: number;
  /** When the visit is (the slot's start): the instant its uses count at. */
  visitAt: Date;
  /** The allowance period containing the visit. */
  period: AllowancePeriod;
  remainingVisits: number | null;
  /** The member discount in percent when the plan discounts bookings; 0 when it does not. */
  discountPercent: number;
}

/**
 * Locks the presented membership (after the slot: lock order slot → membership) and checks it can
 * pay for this visit: the token's version is the membership's current one, the membership is in
 * use (active or past due), its holder photographed if the plan requires it (409
 * holder_photo_required), started and still running when the slot starts (visit-coverage.ts),
 * and the visit and guest passes fit the allowances of the period containing the slot's start:
 * the current period's or the next one's, a later one is not open yet (409 allowance_exhausted).
 * Allowances are counted from the reserved and consumed uses under the lock, so two bookings
 * racing for the last visit of a period queue here and the second is refused (409
 * allowance_exhausted).
 */
export async function lockMemberBookingTerms(
  tx: Tx,
  tenantId: string,
  presented: PresentedMembership,
  slotStartsAt: Date,
): Promise<MemberBookingTerms> {
  const membership = await lockMembership(tx, { tenantId }, presented.membershipId);
  if (!membership || membership.tokenVersion !== presented.tokenVersion) {
    throw new AppError('member_token_invalid', 'the member token is of an earlier holder or names no membership');
  }
  assertMembershipAllows(membership.status, 'use');
  assertHolderPhotoCaptured(membership);
  assertCoversVisit(membership, slotStartsAt);
  const { plan } = membership;
  const period = visitPeriodAt(plan, membership, slotStartsAt, new Date());
  const visitsUsed = await usedInPeriod(tx, { membershipId: membership.id, kind: 'visit', period });
  const remainingVisits = remainingAfter('visit', plan.visitsPerPeriod, visitsUsed, VISITS_PER_BOOKING, period);
  if (presented.guestPasses > 0) {
    const passesUsed = await usedInPeriod(tx, { membershipId: membership.id, kind: 'guest_pass', period });
    remainingAfter('guest_pass', plan.guestPassesPerPeriod, passesUsed, presented.guestPasses, period);
  }
  return {
    membership,
    guestPasses: presented.guestPasses,
    visitAt: slotStartsAt,
    period,
    remainingVisits,
    discountPercent: plan.discountOnBookings ? plan.memberDiscountPercent : 0,
  };
}

/** The member discount on a total: the percent of it, rounded down to the cent. */
export function memberDiscountCents(totalCents: number, percent: number): number {
  return Math.floor((totalCents * percent) / 100);
}

/**
 * Writes what the booking took from the membership, in the booking's transaction: the visit and
 * any guest passes reserved (released if the booking is cancelled, consumed at check-in) with
 * membership.visits_reserved, and the member discount given with membership.discount_used. All
 * of them count at the visit.
 */
export async function recordBookingUses(
  tx: Tx,
  terms: MemberBookingTerms,
  booking: { id: string; tenantId: string; slotId: string; currency: string; memberDiscountCents: number },
): Promise<void> {
  const { membership } = terms;
  const use = {
    membershipId: membership.id,
    bookingId: booking.id,
    periodKey: terms.period.key,
    countsAt: terms.visitAt,
    status: 'reserved' as const,
  };
  await tx.membershipUsage.create({ data: { ...use, kind: 'visit', quantity: VISITS_PER_BOOKING } });
  if (terms.guestPasses > 0) {
    await tx.membershipUsage.create({ data: { ...use, kind: 'guest_pass', quantity: terms.guestPasses } });
  }
  await recordEvent(tx, {
    tenantId: booking.tenantId,
    name: 'membership.visits_reserved',
    entityType: 'booking',
    entityId: booking.id,
    fields: {
      booking_id: booking.id,
      membership_id: membership.id,
      plan_id: membership.planId,
      slot_id: booking.slotId,
      visits: VISITS_PER_BOOKING,
      guest_passes: terms.guestPasses,
      remaining_visits: terms.remainingVisits,
      period_key: terms.period.key,
    },
  });
  if (booking.memberDiscountCents > 0) {
    await tx.membershipUsage.create({
      data: { ...use, kind: 'discount', quantity: 1, amountCents: booking.memberDiscountCents },
    });
    await recordEvent(tx, {
      tenantId: booking.tenantId,
      name: 'membership.discount_used',
      entityType: 'booking',
      entityId: booking.id,
      fields: {
        membership_id: membership.id,
        plan_id: membership.planId,
        booking_id: booking.id,
        order_id: null,
        discount_percent: terms.discountPercent,
        discount_cents: booking.memberDiscountCents,
        currency: booking.currency,
      },
    });
  }
}

/**
 * A booking was cancelled or refunded: the visits, guest passes and discount it reserved go back
 * to the membership, in the same transaction. Uses consumed at check-in stay. No event: the
 * catalogue has none for it (booking.cancelled / booking.refunded say what happened).
 */
export async function releaseBookingUses(tx: Tx, bookingId: string): Promise<void> {
  await tx.membershipUsage.updateMany({
    where: { bookingId, status: 'reserved' },
    data: { status: 'released', releasedAt: new Date() },
  });
}

/** A booking was checked in: what it reserved of a membership is used up. */
export async function consumeBookingUses(tx: Tx, bookingId: string): Promise<void> {
  await tx.membershipUsage.updateMany({ where: { bookingId, status: 'reserved' }, data: { status: 'consumed' } });
}

import type { Membership, MembershipFreeze, Tx } from '@booking/db';
import { recordEvent } from '@booking/events';
import { membershipRef } from '../memberships/membership-ref';
import { formatDay, freezeDays } from './freeze-dates';

// The freeze events, each written in the transaction of the change it reports.

export function recordFreezeBooked(
  tx: Tx,
  membership: Membership,
  freeze: MembershipFreeze,
  actorKeyId: string | null,
): Promise<string> {
  return recordEvent(tx, {
    tenantId: membership.tenantId,
    name: 'membership.freeze_booked',
    entityType: 'membership',
    entityId: membership.id,
    fields: {
      ...membershipRef(membership),
      freeze_id: freeze.id,
      starts_on: formatDay(freeze.startsOn),
      ends_on: formatDay(freeze.endsOn),
      days: freezeDays(freeze.startsOn, freeze.endsOn),
      fee_cents: freeze.feeCents,
      currency: membership.currency,
      requested_by: freeze.requestedBy,
      actor_user_id: actorKeyId,
    },
  });
}

export function recordFrozen(tx: Tx, membership: Membership, freeze: MembershipFreeze): Promise<string> {
  return recordEvent(tx, {
    tenantId: membership.tenantId,
    name: 'membership.frozen',
    entityType: 'membership',
    entityId: membership.id,
    fields: {
      ...membershipRef(membership),
      freeze_id: freeze.id,
      starts_on: formatDay(freeze.startsOn),
      ends_on: formatDay(freeze.endsOn),
      planned_days: freezeDays(freeze.startsOn, freeze.endsOn),
      fee_cents: freeze.feeCents,
      currency: membership.currency,
    },
  });
}

export function recordUnfrozen(
  tx: Tx,
  membership: Membership,
  freeze: { id: string; frozenDays: number },
  expiry: { previous: Date; now: Date },
): Promise<string> {
  return recordEvent(tx, {
    tenantId: membership.tenantId,
    name: 'membership.unfrozen',
    entityType: 'membership',
    entityId: membership.id,
    fields: {
      ...membershipRef(membership),
      freeze_id: freeze.id,
      frozen_days: freeze.frozenDays,
      previous_expires_at: expiry.previous.toISOString(),
      expires_at: expiry.now.toISOString(),
    },
  });
}

export function recordFreezeCancelled(
  tx: Tx,
  membership: Membership,
  cancelled: {
    freezeId: string;
    was: 'booked' | 'active';
    frozenDays: number;
    reason: string | null;
    actorKeyId: string | null;
  },
): Promise<string> {
  return recordEvent(tx, {
    tenantId: membership.tenantId,
    name: 'membership.freeze_cancelled',
    entityType: 'membership',
    entityId: membership.id,
    fields: {
      ...membershipRef(membership),
      freeze_id: cancelled.freezeId,
      was: cancelled.was,
      frozen_days: cancelled.frozenDays,
      reason: cancelled.reason,
      actor_user_id: cancelled.actorKeyId,
    },
  });
}

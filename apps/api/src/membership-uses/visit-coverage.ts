import type { Membership } from '@booking/db';
import { AppError } from '@booking/domain';

/**
 * Refuses (409 membership_not_active, `detail.starts_at`) a use at `at` before the membership
 * starts: an imported membership can be active with a start still to come. Every use goes
 * through here: a visit is judged at its slot's start (so one booked now for a day on or after
 * the start is fine), any other use at the moment it is made.
 */
export function assertStarted(membership: Pick<Membership, 'status' | 'startsAt'>, at: Date): void {
  if (membership.startsAt && at < membership.startsAt) {
    throw new AppError('membership_not_active', {
      status: membership.status,
      starts_at: membership.startsAt.toISOString(),
    });
  }
}

/**
 * Refuses (409 membership_not_active) a visit at `at` that the membership will not be running
 * for: one before it starts, one at or after the end of a fixed term, or of a recurring
 * membership set to end at its period end. A recurring membership that renews covers later
 * visits; they count against the billing period they will fall in (allowances.ts).
 */
export function assertCoversVisit(
  membership: Pick<Membership, 'billing' | 'status' | 'startsAt' | 'expiresAt' | 'cancelAtPeriodEnd'>,
  at: Date,
): void {
  assertStarted(membership, at);
  const ends = membership.billing === 'fixed_term' || membership.cancelAtPeriodEnd;
  if (ends && membership.expiresAt && membership.expiresAt <= at) {
    throw new AppError('membership_not_active', {
      status: membership.status,
      expires_at: membership.expiresAt.toISOString(),
    });
  }
}

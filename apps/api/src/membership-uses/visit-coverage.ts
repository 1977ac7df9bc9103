import type { Membership } from '@booking/db';
import { AppError } from '@booking/domain';

/**
 * Refuses (409 membership_not_active) a visit at `at` that the membership will not be running
 * for: one at or after the end of a fixed term, or of a recurring membership set to end at its
 * period end. A recurring membership that renews covers later visits; they count against the
 * billing period they will fall in (allowances.ts).
 */
export function assertCoversVisit(
  membership: Pick<Membership, 'billing' | 'status' | 'expiresAt' | 'cancelAtPeriodEnd'>,
  at: Date,
): void {
  const ends = membership.billing === 'fixed_term' || membership.cancelAtPeriodEnd;
  if (ends && membership.expiresAt && membership.expiresAt <= at) {
    throw new AppError('membership_not_active', {
      status: membership.status,
      expires_at: membership.expiresAt.toISOString(),
    });
  }
}

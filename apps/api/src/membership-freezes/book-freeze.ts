import { randomUUID } from 'node:crypto';
import type { Db } from '@booking/db';
import { AppError, assertMembershipAllows } from '@booking/domain';
import { lockMembership } from '../locks';
import type { MembershipActor } from '../memberships/membership-actor';
import { parseDay } from './freeze-dates';
import { recordFreezeBooked } from './freeze-events';
import { isFreezeOverlap, overlappingFreeze } from './freeze-overlap';
import { assertFreezeRules } from './freeze-rules';
import type { BookFreezeRequest } from './freeze-schemas';
import { freezeView } from './freeze-view';

/**
 * Staff or the member book a freeze of an active membership: checked against the plan's rules
 * and the membership's other freezes under the membership lock, so two bookings at once queue
 * and the second sees the first (the exclusion constraint is the backstop). Records
 * membership.freeze_booked; the lifecycle job starts it on its first day.
 */
export async function bookFreeze(
  db: Db,
  actor: MembershipActor,
  membershipId: string,
  request: BookFreezeRequest,
  now = new Date(),
) {
  const startsOn = parseDay(request.starts_on);
  const endsOn = parseDay(request.ends_on);
  if (!startsOn) throw new AppError('invalid_body', [{ field: '/starts_on', message: 'is not a calendar day' }]);
  if (!endsOn) throw new AppError('invalid_body', [{ field: '/ends_on', message: 'is not a calendar day' }]);
  if (endsOn < startsOn) throw new AppError('invalid_body', [{ field: '/ends_on', message: 'is before starts_on' }]);

  try {
    return await db.$transaction(async (tx) => {
      const membership = await lockMembership(tx, { tenantId: actor.tenantId }, membershipId);
      if (!membership) throw new AppError('membership_not_found');
      assertMembershipAllows(membership.status, 'freeze');
      const pending = await tx.membershipChange.findFirst({ where: { membershipId, status: 'pending' } });
      if (pending) throw new AppError('change_pending', { change_id: pending.id });

      const year = startsOn.getUTCFullYear();
      const freezesThatYear = await tx.membershipFreeze.count({
        where: {
          membershipId,
          status: { not: 'cancelled' },
          startsOn: { gte: new Date(Date.UTC(year, 0, 1)), lt: new Date(Date.UTC(year + 1, 0, 1)) },
        },
      });
      assertFreezeRules({
        plan: membership.plan,
        expiresAt: membership.expiresAt,
        startsOn,
        endsOn,
        today: now,
        freezesThatYear,
      });
      const overlap = await overlappingFreeze(tx, membershipId, startsOn, endsOn);
      if (overlap) throw new AppError('freeze_overlap', { freeze_id: overlap.id });

      const freeze = await tx.membershipFreeze.create({
        data: {
          id: randomUUID(),
          membershipId,
          startsOn,
          endsOn,
          status: 'booked',
          feeCents: membership.billing === 'recurring' ? membership.plan.freezeFeeCents : null,
          requestedBy: actor.requestedBy,
          actorKeyId: actor.keyId,
          reason: request.reason ?? null,
        },
      });
      await recordFreezeBooked(tx, membership, freeze, actor.keyId);
      return freezeView(freeze);
    });
  } catch (error) {
    if (isFreezeOverlap(error)) throw new AppError('freeze_overlap');
    throw error;
  }
}

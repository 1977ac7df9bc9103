import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import type Stripe from 'stripe';
import { lockMembership } from '../locks';
import type { MembershipActor } from '../memberships/membership-actor';
import { frozenDaysBy } from './freeze-dates';
import { recordFreezeCancelled } from './freeze-events';
import { requireStripe, resumeAfterFreeze, type ResumedPeriod } from './freeze-provider';
import type { CancelFreezeRequest } from './freeze-schemas';
import { freezeView } from './freeze-view';
import { unfreeze } from './unfreeze';

/** The freeze of the tenant's membership, read without a lock; 404 when either is not theirs. */
async function findFreeze(db: Db, tenantId: string, membershipId: string, freezeId: string) {
  const membership = await db.membership.findFirst({ where: { id: membershipId, tenantId } });
  if (!membership) throw new AppError('membership_not_found');
  const freeze = await db.membershipFreeze.findFirst({ where: { id: freezeId, membershipId } });
  if (!freeze) throw new AppError('freeze_not_found');
  return { membership, freeze };
}

/**
 * Staff or the member cancel a freeze. A booked one is cancelled (membership.freeze_cancelled,
 * was booked, no days frozen). An active one ends early as the end job would end it, with the
 * days frozen so far (membership.unfrozen), and is recorded cancelled (membership.freeze_cancelled,
 * was active); a recurring membership's subscription is resumed first, with the idempotency key
 * the end job uses, so the two racing ask Stripe once. Anything else is 409 freeze_not_cancellable.
 */
export async function cancelFreeze(
  deps: { db: Db; stripe: Stripe | null },
  actor: MembershipActor,
  ids: { membershipId: string; freezeId: string },
  request: CancelFreezeRequest,
  now = new Date(),
) {
  const reason = request.reason ?? null;
  const seen = await findFreeze(deps.db, actor.tenantId, ids.membershipId, ids.freezeId);
  let resumed: ResumedPeriod | null = null;
  // Two rounds at most: a freeze the start job began between the read and the lock needs its
  // subscription resumed first, and is then cancelled on the second round.
  for (let round = 1; round <= 2; round += 1) {
    const needsResume = (status: string, billing: string) => billing === 'recurring' && status === 'active';
    if (!resumed && needsResume(seen.freeze.status, seen.membership.billing) && seen.membership.status === 'frozen') {
      resumed = await resumeAfterFreeze(requireStripe(deps.stripe), seen.membership, seen.freeze);
    }
    const outcome = await deps.db.$transaction(async (tx) => {
      const membership = await lockMembership(tx, { tenantId: actor.tenantId }, ids.membershipId);
      if (!membership) throw new AppError('membership_not_found');
      const freeze = await tx.membershipFreeze.findFirst({ where: { id: ids.freezeId, membershipId: membership.id } });
      if (!freeze) throw new AppError('freeze_not_found');
      const cancelled = { freezeId: freeze.id, reason, actorKeyId: actor.keyId };

      if (freeze.status === 'booked') {
        const row = await tx.membershipFreeze.update({
          where: { id: freeze.id },
          data: { status: 'cancelled', frozenDays: 0, endedAt: now },
        });
        await recordFreezeCancelled(tx, membership, { ...cancelled, was: 'booked', frozenDays: 0 });
        return { row };
      }
      if (freeze.status !== 'active') throw new AppError('freeze_not_cancellable', { status: freeze.status });
      if (membership.status === 'frozen') {
        if (membership.billing === 'recurring' && !resumed) return { retry: { freeze, membership } };
        const frozenDays = await unfreeze(tx, membership, freeze, { status: 'cancelled', now, resumed });
        await recordFreezeCancelled(tx, membership, { ...cancelled, was: 'active', frozenDays });
      } else {
        // The membership ended while frozen: the freeze is over, there is nothing to unfreeze.
        const frozenDays = frozenDaysBy(freeze, now);
        await tx.membershipFreeze.update({
          where: { id: freeze.id },
          data: { status: 'cancelled', frozenDays, endedAt: now },
        });
        await recordFreezeCancelled(tx, membership, { ...cancelled, was: 'active', frozenDays });
      }
      return { row: await tx.membershipFreeze.findUniqueOrThrow({ where: { id: freeze.id } }) };
    });
    if (outcome.row) return freezeView(outcome.row);
    seen.freeze = outcome.retry.freeze;
    seen.membership = outcome.retry.membership;
  }
  throw new AppError('service_unavailable');
}

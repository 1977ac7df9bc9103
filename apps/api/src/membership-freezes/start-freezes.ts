import type { Db } from '@booking/db';
import type { Logger } from '@booking/logging';
import type Stripe from 'stripe';
import { lockMembershipUnlessBusy } from '../locks';
import { dayOf, formatDay } from './freeze-dates';
import { recordFreezeCancelled, recordFrozen } from './freeze-events';
import { billFreezeFee, pauseForFreeze } from './freeze-provider';

const BATCH = 50;

export interface FreezeJobDeps {
  db: Db;
  stripe: Stripe | null;
  logger?: Pick<Logger, 'warn'>;
}

/** What the provider did for a recurring membership's freeze before it is recorded. */
interface Paused {
  feeInvoiceId: string | null;
}

/**
 * Starts the booked freezes whose first day has come (UTC): the membership becomes frozen and
 * membership.frozen is recorded. A recurring membership's subscription is paused first, and the
 * freeze fee billed, outside the transaction (idempotently, keyed by the freeze). A freeze whose
 * membership is no longer active (ended, expired, paused for payment) is cancelled instead, with
 * membership.freeze_cancelled (reason membership_not_active). A membership still frozen by an
 * earlier freeze that ends the day before waits for the end job.
 *
 * Safe on any number of workers at once: each membership is claimed SKIP LOCKED and the freeze's
 * status re-read under the lock, so each transition and its event happen once. Returns how many
 * freezes changed.
 */
export async function startFreezes(deps: FreezeJobDeps, now = new Date()): Promise<number> {
  const today = dayOf(now);
  const due = await deps.db.$queryRaw<{ id: string }[]>`
    SELECT f.id FROM membership_freezes f JOIN memberships m ON m.id = f.membership_id
    WHERE f.status = 'booked' AND f.starts_on <= ${formatDay(today)}::date AND m.status <> 'frozen'
    ORDER BY f.starts_on, f.id
    LIMIT ${BATCH}`;
  let changed = 0;
  for (const { id } of due) {
    try {
      if (await startFreeze(deps, id, now)) changed += 1;
    } catch (error) {
      // The provider refused or did not answer: the freeze stays booked for the next run.
      deps.logger?.warn({ err: error, freezeId: id }, 'could not start a membership freeze');
    }
  }
  return changed;
}

async function startFreeze(deps: FreezeJobDeps, freezeId: string, now: Date): Promise<boolean> {
  const seen = await deps.db.membershipFreeze.findUniqueOrThrow({
    where: { id: freezeId },
    include: { membership: true },
  });
  let paused: Paused | undefined;
  if (seen.membership.billing === 'recurring' && seen.membership.status === 'active') {
    if (!deps.stripe) {
      deps.logger?.warn({ freezeId }, 'a recurring membership freeze waits for payments to be configured');
      return false;
    }
    await pauseForFreeze(deps.stripe, seen.membership, seen);
    const fee = seen.feeCents ?? 0;
    paused = {
      feeInvoiceId:
        fee > 0
          ? (seen.stripeFeeInvoiceId ??
            (await billFreezeFee(deps.stripe, seen.membership, { id: seen.id, feeCents: fee })))
          : null,
    };
  }

  return deps.db.$transaction(async (tx) => {
    const membership = await lockMembershipUnlessBusy(tx, seen.membershipId);
    if (!membership) return false;
    const freeze = await tx.membershipFreeze.findUniqueOrThrow({ where: { id: freezeId } });
    if (freeze.status !== 'booked' || membership.status === 'frozen') return false;
    if (membership.status !== 'active') {
      if (paused) deps.logger?.warn({ freezeId }, 'a freeze was cancelled after its subscription was paused');
      await tx.membershipFreeze.update({
        where: { id: freezeId },
        data: { status: 'cancelled', frozenDays: 0, endedAt: now },
      });
      await recordFreezeCancelled(tx, membership, {
        freezeId,
        was: 'booked',
        frozenDays: 0,
        reason: 'membership_not_active',
        actorKeyId: null,
      });
      return true;
    }
    // Became active after it was read: the subscription was not paused yet, the next run does it.
    if (membership.billing === 'recurring' && !paused) return false;
    const started = await tx.membershipFreeze.update({
      where: { id: freezeId },
      data: { status: 'active', startedAt: now, stripeFeeInvoiceId: paused?.feeInvoiceId ?? null },
    });
    await tx.membership.update({ where: { id: membership.id }, data: { status: 'frozen' } });
    await recordFrozen(tx, membership, started);
    return true;
  });
}

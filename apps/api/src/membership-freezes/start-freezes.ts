import type { Db, Membership, MembershipFreeze } from '@booking/db';
import type { Logger } from '@booking/logging';
import type Stripe from 'stripe';
import { lockMembership, lockMembershipUnlessBusy } from '../locks';
import { dayOf, formatDay } from './freeze-dates';
import { recordFreezeCancelled, recordFrozen } from './freeze-events';
import { billFreezeFee, pauseForFreeze, renewedBeforeFreeze } from './freeze-provider';
import { undoCancelledStarts, undoFreezeStart } from './undo-freeze-start';

const BATCH = 50;
/** A recurring freeze starts this long before the renewal, so the pause comes before Stripe renews. */
export const RECURRING_START_LEAD_MS = 30 * 60_000;

export interface FreezeJobDeps {
  db: Db;
  stripe: Stripe | null;
  logger?: Pick<Logger, 'warn'>;
}

/** What the provider did for a recurring membership's freeze before it is recorded. */
interface Paused {
  feeInvoiceId: string | null;
}

type SeenFreeze = MembershipFreeze & { membership: Membership };

/** Why the job cancels a booked freeze instead of starting it. */
type CancelReason = 'membership_not_active' | 'renewed_before_start';

/**
 * Starts the booked freezes that are due: a fixed-term freeze on its first day (UTC); a
 * recurring one RECURRING_START_LEAD_MS before the membership's renewal (expires_at), or at the
 * latest the day after its first day. The membership becomes frozen and membership.frozen is
 * recorded. A recurring membership's subscription is paused first, and the freeze fee billed,
 * outside the transaction (idempotently, keyed by the freeze), after the freeze is stamped
 * provider_requested_at. A freeze whose membership is no longer active (ended, expired, paused
 * for payment) is cancelled instead, with membership.freeze_cancelled (reason
 * membership_not_active); a recurring one whose subscription Stripe already renewed is cancelled
 * with reason renewed_before_start. A membership still frozen by an earlier freeze that ends the
 * day before waits for the end job.
 *
 * A freeze found cancelled (or its membership no longer active) after Stripe was asked has the
 * pause and the fee undone after the commit (undoFreezeStart); one that could not be undone then
 * is retried by every later run (undoCancelledStarts).
 *
 * Safe on any number of workers at once: each membership is claimed SKIP LOCKED and the freeze's
 * status re-read under the lock, so each transition and its event happen once. Returns how many
 * freezes changed.
 */
export async function startFreezes(deps: FreezeJobDeps, now = new Date()): Promise<number> {
  await undoCancelledStarts(deps, now);
  const today = formatDay(dayOf(now));
  const soon = new Date(now.getTime() + RECURRING_START_LEAD_MS);
  const due = await deps.db.$queryRaw<{ id: string }[]>`
    SELECT f.id FROM membership_freezes f JOIN memberships m ON m.id = f.membership_id
    WHERE f.status = 'booked' AND m.status <> 'frozen'
      AND CASE WHEN m.billing = 'recurring'
        THEN (m.expires_at <= ${soon} AND f.starts_on <= ${formatDay(dayOf(soon))}::date) OR f.starts_on < ${today}::date
        ELSE f.starts_on <= ${today}::date END
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
  if (seen.status !== 'booked') return false;
  let paused: Paused | undefined;
  let renewed = false;
  if (seen.membership.billing === 'recurring' && seen.membership.status === 'active') {
    if (!deps.stripe) {
      deps.logger?.warn({ freezeId }, 'a recurring membership freeze waits for payments to be configured');
      return false;
    }
    renewed = await renewedBeforeFreeze(deps.stripe, seen.membership, seen);
    if (!renewed) paused = await askStripe(deps.db, deps.stripe, seen, now);
    if (!renewed && !paused) return false;
  }

  const outcome = await deps.db.$transaction(async (tx) => {
    // Once Stripe was asked, the outcome must be recorded (or undone) now: wait for the lock.
    const membership = paused
      ? await lockMembership(tx, { tenantId: seen.membership.tenantId }, seen.membershipId)
      : await lockMembershipUnlessBusy(tx, seen.membershipId);
    if (!membership) return { changed: false };
    const freeze = await tx.membershipFreeze.findUniqueOrThrow({ where: { id: freezeId } });
    // Cancelled meanwhile (the member or staff): what Stripe was asked is undone after the commit.
    if (paused && freeze.status === 'cancelled' && !freeze.startedAt) {
      await tx.membershipFreeze.update({
        where: { id: freezeId },
        data: { stripeFeeInvoiceId: freeze.stripeFeeInvoiceId ?? paused.feeInvoiceId, providerUndoneAt: null },
      });
      return { changed: false, undo: true };
    }
    if (freeze.status !== 'booked' || membership.status === 'frozen') return { changed: false };
    const reason: CancelReason | null =
      membership.status !== 'active' ? 'membership_not_active' : renewed ? 'renewed_before_start' : null;
    if (reason) {
      await tx.membershipFreeze.update({
        where: { id: freezeId },
        data: {
          status: 'cancelled',
          frozenDays: 0,
          endedAt: now,
          ...(paused && { stripeFeeInvoiceId: paused.feeInvoiceId, providerUndoneAt: null }),
        },
      });
      await recordFreezeCancelled(tx, membership, { freezeId, was: 'booked', frozenDays: 0, reason, actorKeyId: null });
      return { changed: true, undo: !!paused };
    }
    // Became active after it was read: the subscription was not paused yet, the next run does it.
    if (membership.billing === 'recurring' && !paused) return { changed: false };
    const started = await tx.membershipFreeze.update({
      where: { id: freezeId },
      data: { status: 'active', startedAt: now, stripeFeeInvoiceId: paused?.feeInvoiceId ?? null },
    });
    await tx.membership.update({ where: { id: membership.id }, data: { status: 'frozen' } });
    await recordFrozen(tx, membership, started);
    return { changed: true };
  });

  if (outcome.undo && deps.stripe) {
    try {
      await undoFreezeStart({ db: deps.db, stripe: deps.stripe }, freezeId, now);
    } catch (error) {
      // Left with provider_undone_at unset: a later run's undoCancelledStarts retries it.
      deps.logger?.warn(
        { err: error, freezeId },
        'a freeze was cancelled after its subscription was paused; the undo is retried by the next run',
      );
    }
  }
  return outcome.changed;
}

/**
 * Stamps the freeze as being started at Stripe (only while it is still booked: a cancellation
 * that committed first wins and nothing is asked), then pauses the subscription and bills the
 * fee. A cancellation that commits after the stamp finds it, and the undo takes back what was
 * asked. Returns undefined when the freeze was no longer booked.
 */
async function askStripe(db: Db, stripe: Stripe, seen: SeenFreeze, now: Date): Promise<Paused | undefined> {
  const claimed = await db.membershipFreeze.updateMany({
    where: { id: seen.id, status: 'booked' },
    data: { providerRequestedAt: now },
  });
  if (claimed.count === 0) return undefined;
  await pauseForFreeze(stripe, seen.membership, seen);
  const fee = seen.feeCents ?? 0;
  if (fee <= 0) return { feeInvoiceId: null };
  if (seen.stripeFeeInvoiceId) return { feeInvoiceId: seen.stripeFeeInvoiceId };
  const feeInvoiceId = await billFreezeFee(stripe, seen.membership, { id: seen.id, feeCents: fee });
  // Kept at once, whatever the freeze's status now, so an undo can always find the invoice.
  await db.membershipFreeze.updateMany({
    where: { id: seen.id, stripeFeeInvoiceId: null },
    data: { stripeFeeInvoiceId: feeInvoiceId },
  });
  return { feeInvoiceId };
}

import { AppError, isUuid } from '@booking/domain';
import type { Db, Tx } from '@booking/db';
import type Stripe from 'stripe';
import { ANY_TENANT, lockBooking } from '../locks';
import { recordAutomaticRefund } from './automatic-refund';
import { providerOutcome } from './create-refund';
import { bookSucceededRefund, settleRefund, type HoldRelease, type SettleDeps } from './refund-bookkeeping';
import { idOf } from '../payments/stripe-ids';

type Deps = SettleDeps & { db: Db; stripe: Stripe };

export type ProviderRefundEvent = Stripe.ChargeRefundedEvent | Stripe.RefundUpdatedEvent | Stripe.RefundFailedEvent;

/**
 * `charge.refunded`, `refund.updated` and `refund.failed`: brings our refunds in line with the
 * provider's. A refund we asked for (known by its provider id, or by the refund_id we put in its
 * metadata) that was still pending gets the same bookkeeping as an immediate answer; one made
 * elsewhere (the provider's dashboard) is recorded as a new refund of the matching card payment.
 * Each provider event acts once (provider_events), and each refund moves out of pending once
 * (its row is locked and only pending moves), however the notifications overlap. The automatic
 * refund of a late card payment is recorded by whichever comes first, its notification or the
 * payment path (recordAutomaticRefund), and then settled like ours.
 */
export async function reconcileProviderRefunds(deps: Deps, event: ProviderRefundEvent): Promise<void> {
  const refunds =
    event.type === 'charge.refunded' ? await refundsOfCharge(deps.stripe, event.data.object) : [event.data.object];
  const chargeIntent = event.type === 'charge.refunded' ? idOf(event.data.object.payment_intent) : null;

  const releases = await deps.db.$transaction(async (tx) => {
    const first = await tx.$executeRaw`
      INSERT INTO provider_events (id, type) VALUES (${event.id}, ${event.type}) ON CONFLICT (id) DO NOTHING`;
    if (first === 0) return [];
    const found: HoldRelease[] = [];
    for (const refund of automaticLast(refunds)) {
      const release = await reconcileOne(tx, deps, refund, chargeIntent);
      if (release) found.push(release);
    }
    return found;
  });
  for (const release of releases) await deps.holds.releaseAfterCommit(release.slotId, release.holdId, release.seats);
}

/**
 * The refunds of one charge all belong to one booking, and are brought in line in one
 * transaction. Recording an automatic refund (recordAutomaticRefund) takes the payment lock,
 * which the house order puts after the refund lock that settling a refund of ours takes: done
 * first, a later refund in the list would take its refund lock out of order (and be refused
 * every time the notification is delivered). So automatic refunds come last, in their order.
 */
function automaticLast(refunds: Stripe.Refund[]): Stripe.Refund[] {
  const automatic = (refund: Stripe.Refund) => refund.metadata?.automatic === 'true';
  return [...refunds.filter((refund) => !automatic(refund)), ...refunds.filter(automatic)];
}

/** Recent API versions leave `refunds` out of the charge; then they are asked for. */
export async function refundsOfCharge(stripe: Stripe, charge: Stripe.Charge): Promise<Stripe.Refund[]> {
  if (charge.refunds?.data) return charge.refunds.data;
  return (await stripe.refunds.list({ charge: charge.id, limit: 100 })).data;
}

async function findOurRefund(tx: Tx, providerRefund: Stripe.Refund) {
  const byProviderId = await tx.refund.findUnique({ where: { providerRefundId: providerRefund.id } });
  if (byProviderId) return byProviderId;
  const refundId = providerRefund.metadata?.refund_id;
  return refundId && isUuid(refundId) ? tx.refund.findUnique({ where: { id: refundId } }) : null;
}

/**
 * Brings one refund of ours in line with the provider's refund for it: a pending provider refund
 * only records its id; a final one is settled (settleRefund: only a pending refund moves, once).
 * Takes the booking lock; the hold to release after the commit, if any, is returned. Also used by
 * settle-or-ask-again when the provider is asked about a stuck refund.
 */
export async function settleOurRefund(
  tx: Tx,
  deps: SettleDeps,
  ours: { id: string; bookingId: string },
  providerRefund: Stripe.Refund,
): Promise<HoldRelease | null> {
  const outcome = providerOutcome(providerRefund);
  const booking = await lockBooking(tx, ours.bookingId, ANY_TENANT);
  if (outcome.status === 'pending') {
    await tx.refund.updateMany({
      where: { id: ours.id, providerRefundId: null },
      data: { providerRefundId: providerRefund.id },
    });
    return null;
  }
  // A refund that is no longer pending has been settled already: nothing moves twice.
  return (await settleRefund(tx, deps, booking, ours.id, outcome)).release;
}

async function reconcileOne(
  tx: Tx,
  deps: SettleDeps,
  providerRefund: Stripe.Refund,
  chargeIntent: string | null,
): Promise<HoldRelease | null> {
  const outcome = providerOutcome(providerRefund);
  const intentId = idOf(providerRefund.payment_intent) ?? chargeIntent;
  const payment = intentId ? await tx.payment.findUnique({ where: { providerReference: intentId } }) : null;
  const automatic = providerRefund.metadata?.automatic === 'true';
  // The automatic refund of a late card payment, not recorded yet (refund_due, read again under
  // its locks): this notification records it, with the status it carries, if it comes before the
  // payment path does. It is never refused to wait for that path: a payment whose automatic
  // refund is never recorded there (redeliveries of its payment event ran out) would then block
  // every refund notification of its charge for good.
  if (automatic && payment?.refundDue) {
    const recorded = await recordAutomaticRefund(tx, deps, payment.providerReference!, providerRefund);
    if (recorded.kind === 'recorded') return recorded.release;
  }
  const ours = await findOurRefund(tx, providerRefund);
  if (ours) return settleOurRefund(tx, deps, ours, providerRefund);
  // Our metadata, but not a refund of this database: not ours to book. A failed refund made
  // elsewhere gave nothing back.
  if (providerRefund.metadata?.refund_id || outcome.status === 'failed') return null;
  // An automatic refund never recorded as one: made before automatic refunds were recorded (the
  // payment was booked `refunded` then, without a refund row) and left alone, or made by a
  // stalled redelivery after the payment's automatic refund was recorded (refund-for-review), and
  // recorded below as any refund made in Stripe: its money did go back.
  if (automatic && payment?.status === 'refunded') return null;

  if (!payment) {
    await awaitPaymentOfOurIntent(tx, intentId);
    return null;
  }
  if (payment.method !== 'card') return null;
  const booking = await lockBooking(tx, payment.bookingId, ANY_TENANT);
  // Under the booking lock, a concurrent delivery about the same refund has either recorded it
  // (then this one stops here) or waits for us.
  if (await tx.refund.findUnique({ where: { providerRefundId: providerRefund.id } })) return null;

  const refund = await tx.refund.create({
    data: {
      tenantId: payment.tenantId,
      bookingId: payment.bookingId,
      paymentId: payment.id,
      providerRefundId: providerRefund.id,
      amountCents: providerRefund.amount,
      reason: providerRefund.reason ?? null,
      status: outcome.status,
      keepBookingActive: false,
    },
  });
  if (outcome.status === 'pending') {
    // Reserved like ours until its final status arrives.
    await tx.payment.update({
      where: { id: payment.id },
      data: { refundedCents: { increment: providerRefund.amount } },
    });
    return null;
  }
  return bookSucceededRefund(tx, deps.holds, booking, {
    id: refund.id,
    paymentId: payment.id,
    amountCents: refund.amountCents,
    reason: refund.reason,
    keepBookingActive: false,
    raiseRefundedCentsBy: refund.amountCents,
  });
}

/**
 * A refund made in the dashboard of a booking's intent whose payment is not recorded yet (its
 * payment_intent.succeeded failed and waits for Stripe's redelivery, say while Redis was down):
 * dropped, the payment would later confirm the booking with its money gone back. Answered 503,
 * rolled back, so Stripe delivers the refund again, after the payment.
 */
async function awaitPaymentOfOurIntent(tx: Tx, intentId: string | null): Promise<void> {
  if (!intentId) return;
  const booking = await tx.booking.findUnique({ where: { paymentIntentId: intentId }, select: { id: true } });
  if (booking) {
    throw new AppError(
      'service_unavailable',
      'the payment this refund is of is not recorded yet; Stripe will redeliver',
    );
  }
}

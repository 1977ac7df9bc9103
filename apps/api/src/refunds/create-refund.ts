import { Prisma, type Db, type Tx } from '@booking/db';
import { AppError, assertBookingAllows } from '@booking/domain';
import Stripe from 'stripe';
import { madeNothing, providerRefusal } from '../payments/provider-call';
import { ANY_TENANT, lockBooking, lockCardPayment } from '../locks';
import type { Operator } from '../operators/api-key-auth';
import { settleRefund, type FinalOutcome, type SettleDeps } from './refund-bookkeeping';
import type { RefundResponse } from './refund-schemas';

type Deps = SettleDeps & { db: Db; stripe: Stripe | null };

export interface RefundInput {
  bookingId: string;
  amountCents?: number;
  reason?: string;
  keepBookingActive: boolean;
}

/** A refund reserved in our database: what the provider is asked to refund, and under which key. */
export interface Reserved {
  refundId: string;
  /** As stored (lower case): every ask under the key must send the same metadata. */
  bookingId: string;
  paymentIntentId: string;
  amountCents: number;
}

/** What the provider's refund says: final, or still pending. */
export type ProviderOutcome = FinalOutcome | { status: 'pending'; providerRefundId: string };

/** What asking gave: the provider's outcome (with its error when it refused), or no answer at all (and why). */
export type ProviderAnswer =
  | (ProviderOutcome & { providerError?: InstanceType<typeof Stripe.errors.StripeError> })
  | { status: 'unknown'; cause: unknown };

/**
 * Refunds (part of) a booking's card payment through the provider.
 *
 * 1. One transaction reserves the amount: under the booking and payment row locks it checks the
 *    amount against what is still refundable, records a pending refund (with the request's
 *    `idempotencyRef`, by which a retry finds it: see retried-refund) and raises
 *    payments.refunded_cents. Concurrent refunds queue on those locks, so together they never
 *    exceed what was paid.
 * 2. The provider is asked outside any transaction (keyed by the refund id).
 * 3. A second transaction records its answer (refund-bookkeeping). A pending answer leaves the
 *    refund pending for the provider's notification to settle. None at all (the connection failed,
 *    or an answer that does not say whether an earlier try made it) leaves it pending too, and as
 *    no notification may come, the settle-stuck-booking-refunds job settles it from the
 *    provider's record, or sends it again, five minutes on.
 */
export async function createRefund(
  deps: Deps,
  operator: Operator,
  input: RefundInput,
  idempotencyRef?: string,
): Promise<{ httpStatus: 201 | 202; body: RefundResponse }> {
  const { stripe } = deps;
  if (!stripe) throw new AppError('payments_not_configured', 'STRIPE_SECRET_KEY is not set');

  const reserved = await reserveOnce(deps.db, operator, input, idempotencyRef);
  const answer = await askProvider(stripe, reserved);
  const body = await recordProviderAnswer(deps, input.bookingId, reserved.refundId, answer);
  return { httpStatus: body.status === 'succeeded' ? 201 : 202, body };
}

async function reserveOnce(db: Db, operator: Operator, input: RefundInput, idempotencyRef: string | undefined) {
  try {
    return await db.$transaction((tx) => reserveRefund(tx, operator, input, idempotencyRef));
  } catch (error) {
    // Another run of the same request reserved it a moment ago (refunds.idempotency_ref is unique;
    // see retried-refund for a retry that comes once it has).
    if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') {
      throw new AppError('idempotency_request_in_progress');
    }
    throw error;
  }
}

/**
 * Step 3: records what asking the provider gave (a pending answer keeps the refund pending with
 * the provider's id; a final one is settled) and answers with the refund. No answer while the
 * refund is still pending is 409 refund_in_progress; a refund that ends failed is 502
 * payment_provider_error. Also used when a stuck refund is sent again (settle-or-ask-again).
 */
export async function recordProviderAnswer(
  deps: Deps,
  bookingId: string,
  refundId: string,
  answer: ProviderAnswer,
): Promise<RefundResponse> {
  if (answer.status === 'pending') {
    await deps.db.refund.updateMany({
      where: { id: refundId, providerRefundId: null },
      data: { providerRefundId: answer.providerRefundId },
    });
  } else if (answer.status !== 'unknown') {
    const settled = await deps.db.$transaction(async (tx) => {
      // The refund was reserved for this booking in its tenant already.
      const booking = await lockBooking(tx, bookingId, ANY_TENANT);
      return settleRefund(tx, deps, booking, refundId, answer);
    });
    if (settled.release)
      await deps.holds.releaseAfterCommit(settled.release.slotId, settled.release.holdId, settled.release.seats);
  }

  const body = await refundView(deps.db, refundId);
  if (answer.status === 'unknown' && body.status === 'pending') {
    throw new AppError(
      'refund_in_progress',
      {
        refund_id: refundId,
        message: 'the payment provider did not answer; the refund stays pending until it reports the outcome',
      },
      { cause: answer.cause },
    );
  }
  if (body.status === 'failed') {
    const refused = answer.status === 'failed' ? answer.providerError : undefined;
    throw refused
      ? providerRefusal(refused, { refund_id: refundId })
      : new AppError('payment_provider_error', { refund_id: refundId });
  }
  return body;
}

async function reserveRefund(
  tx: Tx,
  operator: Operator,
  input: RefundInput,
  idempotencyRef: string | undefined,
): Promise<Reserved> {
  const booking = await lockBooking(tx, input.bookingId, { tenantId: operator.tenantId });
  assertBookingAllows(booking.status, input.keepBookingActive ? 'refundKeepingActive' : 'refund');
  // Its paid amount was given back as a gift card: a card refund on top would pay out twice.
  if (booking.reissuedGiftCardId !== null) {
    throw new AppError('booking_not_refundable', 'the paid amount was reissued as a gift card');
  }
  const payment = await lockCardPayment(tx, booking.id);
  if (!payment) throw new AppError('booking_not_refundable', 'the booking has no card payment to refund');

  const refundable = payment.status === 'refunded' ? 0 : payment.amountCents - payment.refundedCents;
  const amountCents = input.amountCents ?? refundable;
  if (refundable <= 0 || amountCents > refundable) {
    throw new AppError('refund_exceeds_paid', { refundable_cents: Math.max(refundable, 0) });
  }
  const refund = await tx.refund.create({
    data: {
      tenantId: booking.tenantId,
      bookingId: booking.id,
      paymentId: payment.id,
      amountCents,
      reason: input.reason ?? null,
      status: 'pending',
      keepBookingActive: input.keepBookingActive,
      actorKeyId: operator.keyId,
      idempotencyRef,
    },
  });
  await tx.payment.update({ where: { id: payment.id }, data: { refundedCents: { increment: amountCents } } });
  return { refundId: refund.id, bookingId: booking.id, paymentIntentId: payment.providerReference!, amountCents };
}

/**
 * Asks the provider for the reserved refund. The same refund always sends the same request under
 * the same key, so asking again (settle-or-ask-again) can never refund twice while the provider
 * keeps the key (a day).
 */
export async function askProvider(stripe: Stripe, reserved: Reserved): Promise<ProviderAnswer> {
  try {
    const refund = await stripe.refunds.create(
      {
        payment_intent: reserved.paymentIntentId,
        amount: reserved.amountCents,
        metadata: { booking_id: reserved.bookingId, refund_id: reserved.refundId },
      },
      // One refund row, one provider refund: the SDK's retries of this call cannot refund twice.
      { idempotencyKey: `refund-${reserved.refundId}` },
    );
    return providerOutcome(refund);
  } catch (error) {
    // Refused: nothing was made under the key. Any other Stripe error (no answer, its own
    // failure, its refusal of our key or rate, the key in use) may follow a try that did refund,
    // so the refund stays pending for Stripe's record of it rather than being released.
    if (madeNothing(error)) return { status: 'failed', providerError: error };
    if (error instanceof Stripe.errors.StripeError) return { status: 'unknown', cause: error };
    throw error;
  }
}

/** The provider's refund status as ours: succeeded, failed (failed or canceled), or still pending. */
export function providerOutcome(refund: Stripe.Refund): ProviderOutcome {
  if (refund.status === 'succeeded') return { status: 'succeeded', providerRefundId: refund.id };
  if (refund.status === 'failed' || refund.status === 'canceled')
    return { status: 'failed', providerRefundId: refund.id };
  return { status: 'pending', providerRefundId: refund.id };
}

/** A refund as the routes answer it. */
export async function refundView(db: Db, refundId: string): Promise<RefundResponse> {
  const refund = await db.refund.findUniqueOrThrow({
    where: { id: refundId },
    include: { payment: true, booking: { select: { status: true } } },
  });
  const total = await db.refund.aggregate({
    // As booking.refunded and refund.partial_no_cancel count it: a mismatched payment never paid for the booking.
    where: { bookingId: refund.bookingId, status: 'succeeded', payment: { mismatched: false } },
    _sum: { amountCents: true },
  });
  const { payment } = refund;
  return {
    refund_id: refund.id,
    booking_id: refund.bookingId,
    payment_intent_id: payment.providerReference!,
    provider_refund_id: refund.providerRefundId,
    amount_cents: refund.amountCents,
    currency: payment.currency,
    reason: refund.reason,
    status: refund.status,
    keep_booking_active: refund.keepBookingActive,
    booking_status: refund.booking.status,
    refunded_total_cents: total._sum.amountCents ?? 0,
    refundable_cents: payment.status === 'refunded' ? 0 : Math.max(payment.amountCents - payment.refundedCents, 0),
    created_at: refund.createdAt.toISOString(),
  };
}

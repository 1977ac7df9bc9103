import { AppError } from '@booking/domain';
import Stripe from 'stripe';
import { providerRefusal } from './provider-call';

/**
 * Our refund as the provider knows it, if it ever received the request: among the payment
 * intent's refunds (every page), the one with `providerRefundId` when we heard it, else the first
 * whose metadata `metadataKey` names ours. Without the list nothing can be concluded (sending
 * again is only safe when the provider shows no refund): no answer is 409 refund_in_progress, the
 * refund staying as it is, and so is a payment the provider says it does not know; a refusal is
 * providerRefusal's answer.
 */
export async function findProviderRefund(
  stripe: Stripe,
  paymentIntentId: string,
  ours: { id: string; providerRefundId: string | null; metadataKey: 'refund_id' | 'order_refund_id' },
): Promise<Stripe.Refund | null> {
  let byMetadata: Stripe.Refund | null = null;
  try {
    // Auto-pagination: every refund of the intent, 100 a page.
    for await (const candidate of stripe.refunds.list({ payment_intent: paymentIntentId, limit: 100 })) {
      if (ours.providerRefundId && candidate.id === ours.providerRefundId) return candidate;
      if (candidate.metadata?.[ours.metadataKey] === ours.id) byMetadata ??= candidate;
    }
  } catch (error) {
    if (!(error instanceof Stripe.errors.StripeError)) throw error;
    const unanswered = error instanceof Stripe.errors.StripeConnectionError || (error.statusCode ?? 0) >= 500;
    if (unanswered) {
      throw new AppError(
        'refund_in_progress',
        {
          refund_id: ours.id,
          message: 'the payment provider did not answer; the refund stays pending, try again later',
        },
        { cause: error },
      );
    }
    // Every payment we refund was seen on our own Stripe account, so one Stripe does not know
    // means the service's key is now another account's or mode's (test, live): the refund may
    // well exist where the key cannot see it, and asking again there would fail it (released,
    // refundable twice). Inconclusive like no answer; the warning names the likely mix-up.
    if (error.code === 'resource_missing') {
      throw new AppError(
        'refund_in_progress',
        {
          refund_id: ours.id,
          message:
            "the payment provider does not know the payment (is the service's key of another account or mode?); the refund stays pending",
        },
        { cause: error },
      );
    }
    throw providerRefusal(error, { refund_id: ours.id });
  }
  return byMetadata;
}

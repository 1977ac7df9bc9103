import type Stripe from 'stripe';
import { providerOutcome } from '../refunds/create-refund';
import { isAlreadyRefunded } from './provider-call';

/**
 * Asks the provider to refund all it still holds of a payment, for a refund the service makes on
 * its own (a late payment, a void). No fixed idempotency key: Stripe keeps a key's first answer
 * even when it is a 500, which would block the refund for good; the SDK keys its own network
 * retries, and a second full refund of the same payment is refused, which is what makes retries
 * safe. When it is refused that way, the refund that gave the money back is looked up among the
 * payment's refunds (every page): the first that `isOurs` and did not fail, since a failed one
 * gave nothing back. Null when none is ours: the money went back another way (Stripe's dashboard,
 * a dispute), which the refund notifications record.
 */
export async function refundInFull(
  stripe: Stripe,
  paymentIntentId: string,
  metadata: Record<string, string>,
  isOurs: (refund: Stripe.Refund) => boolean,
): Promise<Stripe.Refund | null> {
  try {
    return await stripe.refunds.create({ payment_intent: paymentIntentId, metadata });
  } catch (error) {
    if (!isAlreadyRefunded(error)) throw error;
  }
  for await (const refund of stripe.refunds.list({ payment_intent: paymentIntentId, limit: 100 })) {
    if (isOurs(refund) && providerOutcome(refund).status !== 'failed') return refund;
  }
  return null;
}

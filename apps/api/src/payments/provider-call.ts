import { AppError } from '@booking/domain';
import Stripe from 'stripe';

/**
 * Stripe's answers as ours: a refusal (4xx, say an amount under its minimum charge) is 502
 * payment_provider_error with Stripe's code, so the widget can show why; no answer or a Stripe
 * 5xx is 503, worth retrying.
 */
export async function providerCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof Stripe.errors.StripeConnectionError) {
      throw new AppError('service_unavailable', undefined, { cause: error });
    }
    if (error instanceof Stripe.errors.StripeError) {
      if ((error.statusCode ?? 500) >= 500) throw new AppError('service_unavailable', undefined, { cause: error });
      throw new AppError('payment_provider_error', { provider_code: error.code ?? null, message: error.message });
    }
    throw error;
  }
}

/**
 * Whether a refund was refused because the payment is refunded in full already: a retry (or a
 * concurrent run) finds the money back, which is what makes full refunds safe to repeat.
 */
export function isAlreadyRefunded(error: unknown): boolean {
  return error instanceof Stripe.errors.StripeInvalidRequestError && error.code === 'charge_already_refunded';
}

import { AppError } from '@booking/domain';
import Stripe from 'stripe';

/**
 * Stripe's failures that are ours, not the request's: no answer, its own 5xx, its refusal of the
 * service's key (401, 403: a revoked or restricted key, whose message names the key's last
 * digits) and its rate limit (429). Each is 503, logged at error with Stripe's error, and never
 * shown to the client.
 */
function serviceFailure(error: InstanceType<typeof Stripe.errors.StripeError>): boolean {
  return (
    error instanceof Stripe.errors.StripeConnectionError ||
    error instanceof Stripe.errors.StripeAuthenticationError ||
    error instanceof Stripe.errors.StripePermissionError ||
    error instanceof Stripe.errors.StripeRateLimitError ||
    (error.statusCode ?? 500) >= 500
  );
}

/**
 * Whether Stripe's error answering a request made under an idempotency key (a refund) says that
 * nothing was made under the key: Stripe refused the request itself (a 4xx, say an amount above
 * what is left to refund). A failure of the service's own (serviceFailure) says no such thing:
 * an earlier try of the same call (the SDK's retry after a lost answer) may have taken effect,
 * and a 429 or a refused key tells nothing of it. Nor does the key being in use (409; or
 * idempotency_error: a request under it made with other parameters): a refund under it may exist.
 */
export function madeNothing(error: unknown): error is InstanceType<typeof Stripe.errors.StripeError> {
  return (
    error instanceof Stripe.errors.StripeError &&
    !serviceFailure(error) &&
    !(error instanceof Stripe.errors.StripeIdempotencyError) &&
    error.statusCode !== 409
  );
}

/**
 * Stripe's error as our answer: a refusal of the request (4xx, say an amount under its minimum
 * charge) is 502 payment_provider_error with Stripe's code and message (and `detail`'s fields),
 * so the caller can show why; a failure of the service's own (see serviceFailure) is 503, worth
 * retrying, with Stripe's error as its cause.
 */
export function providerRefusal(
  error: InstanceType<typeof Stripe.errors.StripeError>,
  detail?: Record<string, unknown>,
): AppError {
  if (serviceFailure(error)) return new AppError('service_unavailable', detail, { cause: error });
  return new AppError('payment_provider_error', {
    ...detail,
    provider_code: error.code ?? null,
    message: error.message,
  });
}

/** Runs a Stripe call, its errors as our answers (providerRefusal). */
export async function providerCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof Stripe.errors.StripeError) {
      throw providerRefusal(error);
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

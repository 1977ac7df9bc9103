import { AppError } from '@booking/domain';
import Stripe from 'stripe';
import { providerCall, providerRefusal } from './provider-call';

/** What providerCall turns `error` into: the AppError's code, detail and cause. */
async function answerTo(error: Error) {
  try {
    await providerCall(() => Promise.reject(error));
  } catch (thrown) {
    if (!(thrown instanceof AppError)) throw thrown;
    return { code: thrown.code, detail: thrown.detail, cause: thrown.cause };
  }
  throw new Error('providerCall did not throw');
}

describe('providerCall', () => {
  it('when Stripe refuses the request itself, then 502 payment_provider_error with its code and message', async () => {
    const refused = new Stripe.errors.StripeInvalidRequestError({
      type: 'invalid_request_error',
      message: 'Amount must be at least $0.50 usd',
      code: 'amount_too_small',
      statusCode: 400,
    } as never);
    expect(await answerTo(refused)).toEqual({
      code: 'payment_provider_error',
      detail: { provider_code: 'amount_too_small', message: 'Amount must be at least $0.50 usd' },
      cause: undefined,
    });
  });

  it.each([
    [
      'unreachable',
      new Stripe.errors.StripeConnectionError({ message: 'An error occurred with our connection to Stripe.' } as never),
    ],
    [
      'failing (500)',
      new Stripe.errors.StripeAPIError({ type: 'api_error', message: 'Internal error', statusCode: 500 } as never),
    ],
    [
      'refusing the service key (401)',
      new Stripe.errors.StripeAuthenticationError({
        type: 'authentication_error',
        message: 'Invalid API Key provided: sk_live_****abcd',
        statusCode: 401,
      } as never),
    ],
    [
      'refusing what the key may do (403)',
      new Stripe.errors.StripePermissionError({
        type: 'invalid_request_error',
        message: 'restricted key',
        statusCode: 403,
      } as never),
    ],
    [
      'rate limiting the service (429)',
      new Stripe.errors.StripeRateLimitError({
        type: 'invalid_request_error',
        message: 'Too many requests',
        statusCode: 429,
      } as never),
    ],
  ])(
    'when Stripe is %s, then 503 service_unavailable, its error kept as the cause and nothing of it in the answer',
    async (_case, error) => {
      expect(await answerTo(error)).toEqual({ code: 'service_unavailable', detail: undefined, cause: error });
    },
  );

  it('when the call fails for another reason than Stripe, then that error goes on unchanged', async () => {
    const bug = new TypeError('not a function');
    await expect(providerCall(() => Promise.reject(bug))).rejects.toBe(bug);
  });

  it("when a refund's refusal is answered, then the refund's id is kept in the detail, and a refused key still never shows", () => {
    const refused = new Stripe.errors.StripeInvalidRequestError({
      type: 'invalid_request_error',
      message: 'Charge ch_1 has already been refunded.',
      code: 'charge_already_refunded',
      statusCode: 400,
    } as never);
    const revoked = new Stripe.errors.StripeAuthenticationError({
      type: 'authentication_error',
      message: 'Invalid API Key provided: sk_live_****abcd',
      statusCode: 401,
    } as never);
    const asAnswer = (error: AppError) => ({ code: error.code, detail: error.detail, cause: error.cause });

    expect(asAnswer(providerRefusal(refused, { refund_id: 'r1' }))).toEqual({
      code: 'payment_provider_error',
      detail: {
        refund_id: 'r1',
        provider_code: 'charge_already_refunded',
        message: 'Charge ch_1 has already been refunded.',
      },
      cause: undefined,
    });
    expect(asAnswer(providerRefusal(revoked, { refund_id: 'r1' }))).toEqual({
      code: 'service_unavailable',
      detail: { refund_id: 'r1' },
      cause: revoked,
    });
  });
});

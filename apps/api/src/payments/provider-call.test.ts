import { AppError } from '@booking/domain';
import Stripe from 'stripe';
import { madeNothing, providerCall, providerRefusal } from './provider-call';

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

describe('madeNothing', () => {
  const stripeError = (Type: typeof Stripe.errors.StripeError, raw: Record<string, unknown>) => new Type(raw as never);

  it.each([
    [
      'refused as asked (400)',
      stripeError(Stripe.errors.StripeInvalidRequestError, { statusCode: 400, code: 'charge_already_refunded' }),
      true,
    ],
    [
      'refused: no such payment (404)',
      stripeError(Stripe.errors.StripeInvalidRequestError, { statusCode: 404, code: 'resource_missing' }),
      true,
    ],
    ['unreachable', stripeError(Stripe.errors.StripeConnectionError, {}), false],
    ['failing (500)', stripeError(Stripe.errors.StripeAPIError, { statusCode: 500 }), false],
    [
      'refusing the service key (401)',
      stripeError(Stripe.errors.StripeAuthenticationError, { statusCode: 401 }),
      false,
    ],
    [
      'refusing what the key may do (403)',
      stripeError(Stripe.errors.StripePermissionError, { statusCode: 403 }),
      false,
    ],
    ['rate limiting the service (429)', stripeError(Stripe.errors.StripeRateLimitError, { statusCode: 429 }), false],
    ['still running a request under the key (409)', stripeError(Stripe.errors.StripeError, { statusCode: 409 }), false],
    [
      'holding the key for other parameters',
      stripeError(Stripe.errors.StripeIdempotencyError, { statusCode: 400 }),
      false,
    ],
  ])('when Stripe is %s, then whether nothing was made under the key: %s', (_case, error, expected) => {
    expect(madeNothing(error)).toBe(expected);
  });

  it('when the error is not Stripe’s, then nothing is known', () => {
    expect(madeNothing(new TypeError('not a function'))).toBe(false);
  });
});

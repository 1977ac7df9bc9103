import request, { type Response } from 'supertest';
import type { TestApp } from './app';

// Stripe promises neither order nor a single delivery: an event may arrive after a later one,
// twice, or at the same time as another. This delivers a batch of signed events the ways the app
// has to cope with. It posts as deliverStripeEvent (card-payments.ts) does, without importing the
// booking factories, so a unit test can use it with any Express app.

export interface DeliveryOptions {
  /** `reversed` delivers the newest event first. */
  order?: 'as_is' | 'reversed';
  /** Delivers the whole batch again after the first pass, same event ids and bytes, as Stripe redelivers. */
  duplicate?: boolean;
  /** Posts every delivery at once instead of one after the other. */
  concurrent?: boolean;
}

const post = (t: Pick<TestApp, 'app'>, signed: { payload: string; signature: string }) =>
  request(t.app)
    .post('/api/payments/stripe/webhook')
    .set('Content-Type', 'application/json')
    .set('Stripe-Signature', signed.signature)
    .send(signed.payload);

/** Posts the events to the app's Stripe webhook; the answers come back in delivery order. */
export async function deliverStripeEvents(
  t: Pick<TestApp, 'app'>,
  signedEvents: { payload: string; signature: string }[],
  options: DeliveryOptions = {},
): Promise<Response[]> {
  const ordered = options.order === 'reversed' ? [...signedEvents].reverse() : signedEvents;
  const deliveries = options.duplicate ? [...ordered, ...ordered] : ordered;
  if (options.concurrent) return Promise.all(deliveries.map((signed) => post(t, signed)));
  const responses: Response[] = [];
  for (const signed of deliveries) responses.push(await post(t, signed));
  return responses;
}

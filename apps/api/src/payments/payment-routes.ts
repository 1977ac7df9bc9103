import { AppError } from '@booking/domain';
import express, { Router } from 'express';
import type Stripe from 'stripe';
import type { AppDeps } from '../app-deps';
import { idempotencyFor } from '../http/idempotency';
import { bookingIdParam } from '../http/path-params';
import { authenticateBookingToken, createPaymentIntent } from './create-payment-intent';
import { handlePaymentSucceeded } from './handle-payment-succeeded';
import type { PaymentIntentResponse, StripeWebhookResponse } from './payment-schemas';
import { reconcileProviderRefunds } from '../refunds/reconcile-provider-refunds';

export function paymentIntentRoutes(deps: AppDeps): Router {
  const router = Router();
  const once = idempotencyFor(deps.redis, deps.config);
  router.post(
    '/api/embed/bookings/:id/payment-intent',
    (req, res, next) => {
      const bookingId = bookingIdParam(req);
      res.locals.payable = {
        bookingId,
        tenantId: authenticateBookingToken(deps.config, req.get('X-Booking-Token'), bookingId),
      };
      next();
    },
    once('payment-intent'),
    async (_req, res) => {
      const payable = res.locals.payable as { bookingId: string; tenantId: string };
      res.json((await createPaymentIntent(deps, payable)) satisfies PaymentIntentResponse);
    },
  );
  return router;
}

/**
 * Stripe's notifications. Mounted before the JSON body parser: the signature covers the raw
 * bytes, so they must reach constructEvent untouched.
 */
export function stripeWebhookRoutes(deps: AppDeps): Router {
  const router = Router();
  router.post(
    '/api/payments/stripe/webhook',
    express.raw({ type: () => true, limit: deps.config.bodyLimitBytes }),
    async (req, res) => {
      const { stripe } = deps;
      const secret = deps.config.stripe.webhookSecret;
      if (!stripe || !secret)
        throw new AppError('payments_not_configured', 'STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET are required');
      let event: Stripe.Event;
      try {
        event = stripe.webhooks.constructEvent(req.body as Buffer, req.get('Stripe-Signature') ?? '', secret);
      } catch {
        throw new AppError('invalid_signature', 'Stripe-Signature does not match the payload');
      }
      if (event.type === 'payment_intent.succeeded') {
        await handlePaymentSucceeded({ db: deps.db, holds: deps.holds, stripe }, event.id, event.data.object);
      } else if (
        event.type === 'charge.refunded' ||
        event.type === 'refund.updated' ||
        event.type === 'refund.failed'
      ) {
        await reconcileProviderRefunds({ db: deps.db, holds: deps.holds, stripe }, event);
      }
      res.json({ received: true } satisfies StripeWebhookResponse);
    },
  );
  return router;
}

import { AppError } from '@booking/domain';
import express, { type IRouter } from 'express';
import type Stripe from 'stripe';
import type { AppDeps } from '../app-deps';
import { idempotencyFor } from '../http/idempotency';
import { bookingIdParam } from '../http/path-params';
import { authenticateBookingToken, createPaymentIntent } from './create-payment-intent';
import { handleOrderPaymentSucceeded } from '../online-orders/handle-order-payment';
import { handlePaymentSucceeded } from './handle-payment-succeeded';
import type { PaymentIntentResponse, StripeWebhookResponse } from './payment-schemas';
import { orderOfPayment, reconcileOrderRefunds } from '../orders/reconcile-order-refunds';
import { reconcileProviderRefunds, refundsOfCharge } from '../refunds/reconcile-provider-refunds';
import { idOf } from './stripe-ids';
import { handlePendingUpdateExpired } from '../membership-changes/expire-pending-update';
import { handleMembershipBillingEvent, isMembershipBillingEvent } from '../membership-billing/handle-billing-event';

export function paymentIntentRoutes(router: IRouter, deps: AppDeps): void {
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
}

/**
 * Stripe's notifications. Mounted before the JSON body parser: the signature covers the raw
 * bytes, so they must reach constructEvent untouched.
 */
export function stripeWebhookRoutes(router: IRouter, deps: AppDeps): void {
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
        // An online order's payment names its order; a booking's, its booking.
        if (event.data.object.metadata?.order_id) {
          await handleOrderPaymentSucceeded(
            { db: deps.db, config: deps.config, stripe, logger: deps.logger },
            event.id,
            event.data.object,
          );
        } else {
          await handlePaymentSucceeded(
            { db: deps.db, holds: deps.holds, stripe, logger: deps.logger },
            event.id,
            event.data.object,
          );
        }
      } else if (
        event.type === 'charge.refunded' ||
        event.type === 'refund.updated' ||
        event.type === 'refund.failed'
      ) {
        const intent = idOf(event.data.object.payment_intent);
        const orderId = await orderOfPayment(deps.db, intent);
        if (orderId) {
          const refunds =
            event.type === 'charge.refunded' ? await refundsOfCharge(stripe, event.data.object) : [event.data.object];
          await reconcileOrderRefunds(deps.db, event, orderId, { refunds }, deps.logger);
        } else {
          await reconcileProviderRefunds({ db: deps.db, holds: deps.holds, stripe, logger: deps.logger }, event);
        }
      } else if (event.type === 'charge.dispute.created') {
        // Disputes matter for the value a payment funded; a booking's are handled at Stripe.
        const orderId = await orderOfPayment(deps.db, idOf(event.data.object.payment_intent));
        if (orderId) await reconcileOrderRefunds(deps.db, event, orderId, { dispute: event.data.object }, deps.logger);
      } else if (event.type === 'customer.subscription.pending_update_expired') {
        // An upgrade made now whose invoice was not paid in time: the plan change fails.
        await handlePendingUpdateExpired(deps.db, event.id, event.data.object);
      } else if (isMembershipBillingEvent(event)) {
        // Recurring memberships: re-read from Stripe and converged, whatever order events come in.
        await handleMembershipBillingEvent({ db: deps.db, config: deps.config, stripe }, event);
      }
      res.json({ received: true } satisfies StripeWebhookResponse);
    },
  );
}

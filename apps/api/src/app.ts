import express, { type Request } from 'express';
import type { AppDeps } from './app-deps';
import { amendmentRoutes } from './amendments/amendment-routes';
import { bookingRoutes } from './bookings/booking-routes';
import { customerRoutes } from './customers/customer-routes';
import { giftCardRoutes } from './gift-cards/gift-card-routes';
import { closeConnectionsWhileDraining } from './health/drain';
import { healthRoutes } from './health/health-routes';
import { holdRoutes } from './holds/hold-routes';
import { errorHandler, notFoundHandler } from './http/error-handler';
import { requestDeadline } from './http/request-deadline';
import { requestLogger } from './http/request-logger';
import { requestMetrics } from './http/request-metrics';
import { oneLayer } from './http/one-layer';
import { docsRoutes } from './openapi/docs-routes';
import { operatorBookingRoutes } from './bookings/operator-booking-routes';
import { paymentIntentRoutes, stripeWebhookRoutes } from './payments/payment-routes';
import { onlineOrderRoutes } from './online-orders/online-order-routes';
import { orderRoutes } from './orders/order-routes';
import { posOrderRoutes } from './pos-orders/pos-order-routes';
import { posRoutes } from './pos/pos-routes';
import { refundRoutes } from './refunds/refund-routes';
import { queueDashboardRoutes } from './webhooks/queue-dashboard';
import { webhookRoutes } from './webhooks/webhook-routes';
import { membershipRoutes } from './memberships/membership-routes';
import { freezeRoutes } from './membership-freezes/freeze-routes';
import { holderRoutes } from './membership-holders/holder-routes';
import { membershipUseRoutes } from './membership-uses/membership-use-routes';
import { membershipChangeRoutes } from './membership-changes/change-routes';
import { membershipBillingRoutes } from './membership-billing/membership-billing-routes';
import { membershipPlanRoutes } from './membership-plans/plan-routes';
import { membershipSaleRoutes } from './membership-sales/membership-sale-routes';
import { walletRoutes } from './wallets/wallet-routes';
import { waiverRoutes } from './waivers/waiver-routes';
import { widgetRoutes } from './widget/widget-routes';

export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', deps.config.trustProxy);

  app.use(
    oneLayer(
      requestMetrics,
      closeConnectionsWhileDraining(deps.drain),
      requestLogger(deps.logger),
      requestDeadline(deps.config.requestTimeoutMs),
    ),
  );
  stripeWebhookRoutes(app, deps);
  app.use(
    express.json({
      limit: deps.config.bodyLimitBytes,
      // The exact bytes are the Idempotency-Key fingerprint.
      verify: (req, _res, buf) => {
        (req as Request & { rawBody?: Buffer }).rawBody = buf;
      },
    }),
  );

  // Each feature adds its routes to the app itself rather than to a router of its own: a request
  // entering a router pays for its dispatch whether or not a route in it matches, and a hold
  // passed two of them. Express tries the routes in order, so the hot paths come first.
  holdRoutes(app, deps);
  bookingRoutes(app, deps);
  healthRoutes(app, deps);
  docsRoutes(app, deps);
  widgetRoutes(app, deps);
  operatorBookingRoutes(app, deps);
  amendmentRoutes(app, deps);
  customerRoutes(app, deps);
  giftCardRoutes(app, deps);
  waiverRoutes(app, deps);
  posRoutes(app, deps);
  posOrderRoutes(app, deps);
  onlineOrderRoutes(app, deps);
  orderRoutes(app, deps);
  walletRoutes(app, deps);
  membershipPlanRoutes(app, deps);
  membershipSaleRoutes(app, deps);
  membershipRoutes(app, deps);
  freezeRoutes(app, deps);
  holderRoutes(app, deps);
  membershipUseRoutes(app, deps);
  membershipChangeRoutes(app, deps);
  membershipBillingRoutes(app, deps);
  refundRoutes(app, deps);
  paymentIntentRoutes(app, deps);
  webhookRoutes(app, deps);
  queueDashboardRoutes(app, deps);

  app.use(notFoundHandler);
  app.use(errorHandler);
  return app;
}

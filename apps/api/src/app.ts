import express, { type Request } from 'express';
import type { AppDeps } from './app-deps';
import { bookingRoutes } from './bookings/booking-routes';
import { healthRoutes } from './health/health-routes';
import { holdRoutes } from './holds/hold-routes';
import { errorHandler, notFoundHandler } from './http/error-handler';
import { requestLogger } from './http/request-logger';
import { docsRoutes } from './openapi/docs-routes';
import { operatorBookingRoutes } from './bookings/operator-booking-routes';
import { paymentIntentRoutes, stripeWebhookRoutes } from './payments/payment-routes';
import { queueDashboardRoutes } from './webhooks/queue-dashboard';
import { webhookRoutes } from './webhooks/webhook-routes';
import { widgetRoutes } from './widget/widget-routes';

export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', deps.config.trustProxy);

  app.use(requestLogger(deps.logger));
  app.use(stripeWebhookRoutes(deps));
  app.use(
    express.json({
      limit: deps.config.bodyLimitBytes,
      // The exact bytes are the Idempotency-Key fingerprint.
      verify: (req, _res, buf) => {
        (req as Request & { rawBody?: Buffer }).rawBody = buf;
      },
    }),
  );

  app.use(healthRoutes(deps));
  app.use(docsRoutes(deps));
  app.use(widgetRoutes(deps));
  app.use(holdRoutes(deps));
  app.use(bookingRoutes(deps));
  app.use(operatorBookingRoutes(deps));
  app.use(paymentIntentRoutes(deps));
  app.use(webhookRoutes(deps));
  app.use(queueDashboardRoutes(deps));

  app.use(notFoundHandler);
  app.use(errorHandler);
  return app;
}

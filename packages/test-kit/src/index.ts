// One set-up for every test suite. Tests import from '@booking/test-kit' only, never a file of
// another app's test/ folder or a package's src/ by path.

// The app in-process on the real PostgreSQL and Redis, and what tests make with it.
export { clientIp, createTestApp, kayak, seedTenant, SHORT_DEADLINE_ENV, type TestApp } from './app';
export {
  bookingBody,
  confirmedBooking,
  createBooking,
  heldBooking,
  placeHold,
  type BookingOptions,
  type BookingRequestBody,
  type CreatedBooking,
  type Experience,
} from './bookings';
export { holdExpired, redisNow } from './holds';
export { bearer, keyIdOf } from './operators';
export { hostsTableLookup, LOCAL_HOSTS } from './hosts-table-lookup';
export { withResponseConformance } from './response-conformance';

// Payments against a fake Stripe.
export {
  parseStripeForm,
  signEvent,
  signedPaymentSucceededEvent,
  startFakeStripe,
  stopFakeStripe,
  type FakePaymentIntent,
  type FakeRefund,
  type FakeStripe,
  type RecordedRequest,
  type SignedEvent,
} from './fake-stripe';
export type { FakeRefundStatus } from './fake-stripe-refund-answers';
export {
  signedChargeRefundedEvent,
  signedDisputeCreatedEvent,
  signedRefundEvent,
  unreachableStripeUrl,
  type RefundObject,
} from './fake-stripe-refund-events';
export { cardPaidBooking, deliverStripeEvent, payByCard, stripeEnv, TEST_WEBHOOK_SECRET } from './card-payments';
// Stripe Billing (memberships) against the same fake: its objects, and the notifications about them.
export type { FakeBilling, InvoicePaymentIntent } from './fake-stripe-billing';
export type {
  AttemptOutcome,
  BillingChange,
  FakeCustomer,
  FakeInvoice,
  FakeInvoiceItem,
  FakeInvoiceLine,
  FakePrice,
  FakeProduct,
  FakeSubscription,
  FakeSubscriptionItem,
  InvoiceStatus,
  SubscriptionStatus,
} from './fake-stripe-billing-types';
export {
  signedBillingEvent,
  type BillingEventObjects,
  type BillingEventType,
  type SignedBillingEvent,
} from './fake-stripe-billing-events';
export { deliverStripeEvents, type DeliveryOptions } from './stripe-event-delivery';

// Webhook receivers.
export {
  answer,
  WebhookReceiver,
  type ReceivedRequest,
  type ReceiverBehaviour,
  type ReceiverReply,
} from './webhook-receiver';

// Databases, processes and the network, owned by the test and stopped by it.
export { createIsolatedDatabase } from './isolated-database';
export { killAllServiceProcesses, startServiceProcess, type ServiceProcess } from './service-process';
export { startRedisServer, type RedisServer } from './redis-server';
export { startRedisCluster, type ClusterNode, type RedisCluster } from './redis-cluster';
export { startTcpProxy, type TcpProxy } from './tcp-proxy';
export { startHaproxy, type Haproxy, type ServerStat, type Upstream } from './haproxy';
export { freePort } from './ports';
export { imageNodeOptions } from './image-node-options';
export { metricValue, scrapeMetrics } from './prometheus-text';

// Waiting on a state instead of sleeping.
export { sleep, waitUntil, within, type WaitOptions } from './wait';
export { untilDone } from './job-batches';
export { seedMembership, seedMembershipPlan, type MembershipOptions, type PlanOptions } from './memberships';
export {
  fakeStripeClient,
  pendingRecurringMembership,
  type PendingRecurringMembership,
} from './membership-billing-fixtures';
// Till orders, online top-ups, wallets and gift cards, on the app pointed at a fake Stripe.
export {
  openFundedWallet,
  openShift,
  paidWalletTopUp,
  postWalletTopUp,
  seedGiftCard,
  startStripeTestApp,
  stopStripeTestApp,
  tillCardPayment,
  openTillOrder,
  walletTopUp,
  type WalletTopUpOrder,
} from './orders';

import { ok, uuidPathParam } from '../openapi/openapi-helpers';
import type { OpenApiFeature } from '../openapi/openapi-operation';
import { anonymous, orderToken } from '../openapi/openapi-security';
import { BuyerOrder, WalletTopupRequest, WalletTopupResponse } from './online-order-schemas';

export const onlineOrdersOpenApi: OpenApiFeature = {
  tag: {
    name: 'Online orders',
    description: 'Anonymous purchases paid through Stripe: wallet top-ups (memberships are under Membership sales).',
  },
  operations: [
    {
      method: 'post',
      path: '/api/orders/wallet-topups',
      operationId: 'createWalletTopup',
      summary: "Buy stored value for the customer's wallet; answers the PaymentIntent to pay",
      description:
        'Makes (or refreshes) the customer by email, opens their wallet in the currency, and an order awaiting payment; records order.created (and customer.created for a new customer). Confirm the PaymentIntent with Stripe.js: its success funds the wallet (wallet.funded) once, however often Stripe notifies. Unpaid after ONLINE_ORDER_PAY_MINUTES, the order is cancelled (order.cancelled); a payment arriving after that is refunded automatically.',
      access: anonymous,
      requestBody: {
        schema: WalletTopupRequest,
        example: {
          tenant: 'harbour-adventures',
          amount_cents: 5000,
          currency: 'USD',
          customer: { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace' },
        },
      },
      responses: { 201: ok('The order, awaiting payment', WalletTopupResponse) },
      errors: {
        invalid_body: 'amount_cents outside 100..100000000, currency not three upper-case letters, a bad customer, ...',
        tenant_not_found: 'no published tenant has this slug',
        wallet_limit_exceeded:
          'the wallet would hold more than 1000000000 (10,000,000.00): stored value is capped (detail.max_balance_cents, balance_cents)',
        payments_not_configured: 'STRIPE_SECRET_KEY is not set: nothing was written',
        payment_provider_error:
          'Stripe refused the PaymentIntent (detail: provider_code, message); the order is left unpaid and cancelled silently',
      },
      idempotency: 'Scoped to the route and the client address',
      rateLimitPerMinute: (config) => config.rateLimits.ordersPerMinute,
    },
    {
      method: 'get',
      path: '/api/orders/{id}',
      operationId: 'getBuyerOrder',
      summary: "The buyer's view of an online order (a wallet top-up or a membership), for polling after paying",
      access: orderToken,
      parameters: [uuidPathParam('the order id')],
      responses: { 200: ok('The order', BuyerOrder) },
      errors: { order_not_found: 'no such online order (also for an id that is not a uuid)' },
    },
  ],
  schemas: [WalletTopupRequest, WalletTopupResponse, BuyerOrder],
};

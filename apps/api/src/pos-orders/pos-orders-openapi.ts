import { ok, uuidPathParam } from '../openapi/openapi-helpers';
import type { OpenApiFeature } from '../openapi/openapi-operation';
import { apiKeyOf } from '../openapi/openapi-security';
import { OrderView } from '../orders/order-schemas';
import { AddTenderRequest, OpenPosOrderRequest, SettlePosOrderRequest } from './pos-order-schemas';

const orderId = uuidPathParam('the order id');
const orderNotFound = 'no such till order in this tenant (also for an id that is not a uuid)';
const shiftErrors = {
  shift_not_found: "the order's shift is not this tenant's",
  shift_closed: "the order's shift is closed: the till takes nothing more",
};

export const posOrdersOpenApi: OpenApiFeature = {
  tag: {
    name: 'POS orders',
    description:
      'Retail orders at the till (no admissions: those are bookings), paid with any mix of card, cash, wallet and gift card tenders.',
  },
  operations: [
    {
      method: 'post',
      path: '/api/pos/orders',
      operationId: 'openPosOrder',
      summary: 'Open a retail order on an open shift (staff+)',
      description:
        "Product lines, wallet_load lines that fund a wallet when the order settles, and membership lines that sell a fixed-term plan at its price (the membership is pending until the order settles, cancelled if it is voided). With membership_token, the plan's member discount (percent of the product lines, rounded down) comes off: discount_cents and membership_id, total_cents after it; membership.discount_used is recorded when the order settles. No event until it settles.",
      access: apiKeyOf('staff'),
      idempotency: 'Scoped to the route and the API key',
      requestBody: {
        schema: OpenPosOrderRequest,
        example: {
          shift_id: '9c1f7e0a-3d4b-4c2a-8e5f-6a7b8c9d0e1f',
          currency: 'USD',
          lines: [
            { type: 'product', sku: 'TSHIRT-M', description: 'T-shirt', quantity: 2, unit_price_cents: 1500 },
            { type: 'wallet_load', wallet_id: '3a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d', amount_cents: 2000 },
          ],
        },
      },
      responses: { 201: ok('The open order', OrderView) },
      errors: {
        invalid_body:
          'a bad line, no lines or more than 50, quantity or price out of range, or a total above 100000000',
        shift_not_found: 'no such shift in this tenant',
        shift_closed: 'the shift is closed',
        customer_not_found: 'customer_id names no customer of this tenant',
        wallet_not_found: 'a wallet_load line names no wallet of this tenant (detail.wallet_id)',
        wallet_currency_mismatch: "a wallet_load line's wallet is in another currency",
        membership_plan_not_found: "a membership line's plan_id is not one of this tenant's plans (detail.plan_id)",
        plan_not_active: "a membership line's plan is no longer sold",
        plan_invalid:
          "a membership line's plan is recurring (sold online only: a subscription needs the member's card) or in another currency",
        member_token_invalid:
          'membership_token is forged, expired, of another tenant or of an earlier holder, or names no membership',
        membership_not_active: "the member's membership is not active or past due (detail.status)",
        holder_photo_required:
          "the membership's plan requires a photo and its holder's photo is not captured yet (detail.membership_id)",
        discount_not_applicable: "the member's plan gives no member discount on retail orders",
      },
    },
    {
      method: 'post',
      path: '/api/pos/orders/{id}/tenders',
      operationId: 'addTender',
      summary: 'Add a tender to an open order; wallet and gift card value is held (staff+)',
      description:
        'card: payment_reference, a succeeded PaymentIntent made by the till for this order (metadata tenant_id, purpose=pos_order, order_id) for exactly amount_cents. cash: taken into the order’s shift. wallet: wallet_token, the card number or QR secret. gift_card: gift_card_code. Tenders never add up to more than the total.',
      access: apiKeyOf('staff'),
      parameters: [orderId],
      idempotency: 'Scoped to the route and the API key',
      requestBody: {
        schema: AddTenderRequest,
        example: { type: 'wallet', amount_cents: 1500, wallet_token: 'WABCD-EFGH-JKLM-NPQR-STUV' },
      },
      responses: { 201: ok('The order with its tenders', OrderView) },
      errors: {
        invalid_body: 'a bad type or amount, or the field of another tender type (each type takes only its own)',
        order_not_found: orderNotFound,
        ...shiftErrors,
        order_not_open: 'the order was settled or voided',
        tenders_exceed_total: 'the tenders would add up to more than the total (detail.remaining_cents)',
        wallet_token_invalid: 'no wallet token of this tenant has this secret',
        wallet_token_revoked: 'the wallet token was revoked or replaced',
        wallet_currency_mismatch: 'the wallet is in another currency than the order',
        insufficient_wallet_balance: "the wallet's available value is below the amount (detail.available_cents)",
        gift_card_not_found: 'no gift card of this tenant has this code',
        gift_card_currency_mismatch: 'the gift card is in another currency than the order',
        insufficient_gift_card_balance: "the card's available value is below the amount (detail.available_cents)",
        payment_reference_invalid:
          'the PaymentIntent is unknown, not for this order, not succeeded, another amount, or refunded',
        payment_reference_used: 'the PaymentIntent already paid for a sale, a booking or another tender',
        payments_not_configured: 'a card tender without STRIPE_SECRET_KEY: there is nothing to check it against',
      },
    },
    {
      method: 'post',
      path: '/api/pos/orders/{id}/settle',
      operationId: 'settlePosOrder',
      summary: 'Settle an open order: capture its tenders and confirm it (staff+; unpaid: manager+)',
      description:
        'Records order.confirmed, one wallet.spent per wallet tender, one gift_card.redeemed per gift card tender (entity_type order, no code), one wallet.funded per wallet_load line, and one membership.activated (channel pos) per membership line, in one transaction. With unpaid: true a manager confirms an order its tenders do not cover: confirmed_unpaid and balance_due_cents say so, in the answer and the event.',
      access: apiKeyOf('staff'),
      parameters: [orderId],
      requestBody: { schema: SettlePosOrderRequest, example: {}, required: false },
      responses: { 200: ok('The confirmed order', OrderView) },
      errors: {
        forbidden: 'unpaid: true with a staff key: confirming unpaid needs a manager',
        invalid_body: 'unpaid is not a boolean, or another field was sent',
        order_not_found: orderNotFound,
        ...shiftErrors,
        order_not_open: 'the order was settled or voided (also by a concurrent request)',
        order_not_fully_paid: 'the tenders do not cover the total (detail.balance_due_cents)',
        wallet_load_unpaid: 'an order confirmed unpaid cannot fund a wallet',
        membership_unpaid: 'an order confirmed unpaid cannot activate the memberships it sells',
        wallet_limit_exceeded: 'the wallet_load would take its wallet past 1000000000: stored value is capped',
      },
    },
    {
      method: 'post',
      path: '/api/pos/orders/{id}/void',
      operationId: 'voidPosOrder',
      summary: 'Void an open order: release its holds, hand cash back, refund card tenders (staff+)',
      description:
        'Card tenders are refunded through Stripe after the void commits (refund.created, entity_type order); one Stripe refuses stays pending and is retried by the lifecycle worker. No event for the void itself.',
      access: apiKeyOf('staff'),
      parameters: [orderId],
      responses: { 200: ok('The voided order', OrderView) },
      errors: {
        order_not_found: orderNotFound,
        order_not_open: 'the order was settled or voided (also by a concurrent request)',
      },
    },
  ],
  schemas: [OpenPosOrderRequest, AddTenderRequest, SettlePosOrderRequest],
};

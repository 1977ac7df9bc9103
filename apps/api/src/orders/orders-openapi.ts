import { ok, pageParams, uuidPathParam } from '../openapi/openapi-helpers';
import type { OpenApiFeature } from '../openapi/openapi-operation';
import { apiKeyOf } from '../openapi/openapi-security';
import { ORDER_VIEW_SCHEMAS, OrderList, OrderRefundView, OrderView, RefundOrderRequest } from './order-schemas';

const orderId = uuidPathParam('the order id');
const orderNotFound = 'no such order in this tenant (also for an id that is not a uuid)';
const literal = (values: string[]) => ({ type: 'string', enum: values });

export const ordersOpenApi: OpenApiFeature = {
  tag: { name: 'Orders', description: "Operators' reads of every order, and refunds of any order." },
  operations: [
    {
      method: 'get',
      path: '/api/v1/orders',
      operationId: 'listOrders',
      summary: "The tenant's orders, online and at the till, newest first (staff+)",
      access: apiKeyOf('staff'),
      parameters: [
        ...pageParams('next_starting_after of the previous page'),
        {
          name: 'status',
          in: 'query',
          required: false,
          schema: literal(['pending_payment', 'paid', 'cancelled', 'open', 'confirmed', 'voided']),
        },
        { name: 'kind', in: 'query', required: false, schema: literal(['wallet_topup', 'retail', 'membership']) },
        { name: 'channel', in: 'query', required: false, schema: literal(['online', 'pos']) },
        { name: 'customer_id', in: 'query', required: false, schema: { type: 'string', format: 'uuid' } },
      ],
      strictQuery: true,
      responses: { 200: ok('A page of orders with their lines, tenders and refunds', OrderList) },
      errors: {
        invalid_query: 'a bad limit, starting_after or filter, or an unknown parameter',
        order_not_found: 'starting_after names no order of this tenant',
      },
    },
    {
      method: 'get',
      path: '/api/v1/orders/{id}',
      operationId: 'getOrder',
      summary: 'One order with its lines, tenders and refunds (staff+)',
      access: apiKeyOf('staff'),
      parameters: [orderId],
      responses: { 200: ok('The order', OrderView) },
      errors: { order_not_found: orderNotFound },
    },
    {
      method: 'post',
      path: '/api/v1/orders/{id}/refunds',
      operationId: 'refundOrder',
      summary: 'Refund an order through one of its tenders (manager+; allow_shortfall: admin)',
      description:
        "Online top-up: refunded through Stripe (refund.created), and its funding taken back from the wallet (wallet.funding_returned); above the wallet's available value it is refused unless an admin sends allow_shortfall, and then the shortfall is recorded (wallet.refund_review_required). Till order, by tender: wallet → credited back to the same wallet (wallet.refunded); gift card → back on the card; cash → paid out of an open shift; card → through Stripe (refund.created). With line_id, a wallet_load line's funding is taken back as well, by the same rule. Online fixed-term membership order: refunded through Stripe (refund.created); once the refunds reach the amount paid the membership ends with the refund's success (membership.ended, reason refunded), a smaller refund keeps it. Till order with a membership line: the membership ends once the refunds reach beyond the order's other lines to the line's whole value. A recurring membership order is refused (409 order_not_refundable): its subscription is ended with POST /api/v1/memberships/{id}/cancel.",
      access: apiKeyOf('manager'),
      parameters: [orderId],
      idempotency: 'Scoped to the route and the API key',
      requestBody: { schema: RefundOrderRequest, example: { amount_cents: 1500, reason: 'changed their mind' } },
      responses: { 201: ok('The refund (succeeded, or pending while Stripe works)', OrderRefundView) },
      errors: {
        forbidden: 'allow_shortfall without an admin key',
        invalid_body:
          'a bad amount or field; tender_id left out on a till order with several captured tenders; tender_id or line_id on an online order; line_id not a wallet_load line of the order',
        order_not_found: orderNotFound,
        tender_not_found: 'tender_id names no tender of this order',
        tender_not_refundable: 'the tender named was released (it never paid for the order)',
        order_not_refundable:
          'the order is not paid (online) or confirmed (till), or sells a recurring membership (detail.message: end it with POST /api/v1/memberships/{id}/cancel)',
        refund_exceeds_paid:
          'more than the order (online) or the tender (till) has left to refund, or a till order with no captured tender (detail.refundable_cents)',
        refund_exceeds_available:
          'the funded wallet no longer holds that much and allow_shortfall was not sent (detail.available_cents)',
        shift_not_found: 'a cash refund with no open shift to pay it out of',
        shift_closed: "a cash refund from a closed shift: send the open shift's shift_id",
        wallet_limit_exceeded:
          'a wallet tender refund would take the wallet past its cap of 1000000000; refund another way',
        refund_in_progress:
          "Stripe did not answer, failed, rate-limited the service or refused its key, none of which says whether an earlier try made the refund: it stays pending, its value held, until Stripe's notification settles it or, five minutes on, the settle-stuck-order-refunds job settles it from Stripe's record (asking again when Stripe has none, for up to 23 hours after it was made, while Stripe keeps its idempotency key; older, it is left pending, logged, for a retry of the request; a Stripe 5xx after the request began is answered again under the key for 24 hours, so such a refund stays pending that long); also a retry of the request when Stripe does not know the payment (the service's key most likely of another account or mode) (detail.refund_id)",
        payment_provider_error:
          'Stripe refused the refund; nothing was refunded (detail: refund_id, provider_code, message)',
        payments_not_configured: 'a refund through Stripe without STRIPE_SECRET_KEY',
      },
    },
  ],
  schemas: [...ORDER_VIEW_SCHEMAS, OrderList, RefundOrderRequest],
};

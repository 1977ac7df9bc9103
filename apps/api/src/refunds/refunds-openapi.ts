import { PartialRefundRequest, RefundRequest, RefundResponse } from './refund-schemas';
import { error, json, idempotencyKeyParam } from '../openapi/openapi-helpers';

const idempotencyKey = idempotencyKeyParam('Scoped to the route and the API key');

const responses = {
  201: { description: 'Refunded: the provider reports the refund succeeded', ...json(RefundResponse) },
  202: {
    description: 'Accepted by the provider but still pending; a provider notification settles it',
    ...json(RefundResponse),
  },
  400: error(
    'invalid_body; refund_exceeds_paid (detail: {refundable_cents}): more than the card payment has left to refund, pending refunds included',
  ),
  401: error('unauthorized: missing, malformed, unknown or revoked API key'),
  403: error("forbidden: the key's role is below manager"),
  404: error('booking_not_found (in this tenant)'),
  409: error(
    'booking_not_refundable: no card payment, already refunded, or keep_booking_active on a booking that is not confirmed; refund_in_progress (detail: {refund_id}): the provider did not answer, the refund stays pending with its amount reserved until the provider reports the outcome; idempotency_request_in_progress',
  ),
  422: error('idempotency_key_reused'),
  502: error(
    'payment_provider_error (detail: {refund_id, provider_code?, message?}): the provider refused or failed the refund; it is kept as failed and its amount is refundable again',
  ),
  503: error('payments_not_configured'),
};

export const refundsOpenApi = {
  paths: {
    '/api/payments/refunds': {
      post: {
        summary: "Refund all or part of a booking's card payment through the payment provider (manager+)",
        description:
          'Refunds never exceed what the card paid, across concurrent requests. A succeeded refund emits refund.created; when that leaves nothing paid (the card refunded in full and no gift card or cash part) the booking becomes `refunded`, its seats return to the slot and booking.refunded is emitted. Gift card and cash parts are not refunded through the provider; they can be reissued as a gift card.',
        security: [{ apiKey: [] }],
        parameters: [idempotencyKey],
        requestBody: { required: true, ...json(RefundRequest) },
        responses,
      },
    },
    '/api/refunds/partial': {
      post: {
        summary: 'Refund through the provider, optionally keeping the booking active (manager+)',
        description:
          'With keep_booking_active=true the booking stays confirmed and keeps its seats whatever is refunded, and each succeeded refund emits refund.created and refund.partial_no_cancel (with refund_total_cents, all succeeded refunds of the booking). With false it behaves like POST /api/payments/refunds.',
        security: [{ apiKey: [] }],
        parameters: [idempotencyKey],
        requestBody: { required: true, ...json(PartialRefundRequest) },
        responses,
      },
    },
    '/api/refunds/{id}/reconcile': {
      post: {
        summary: 'Settle a refund stuck in pending by asking the payment provider what happened (manager+)',
        description:
          "For a refund the provider never answered about (409 refund_in_progress). The provider's refunds of the payment intent are listed: when one is this refund (its provider id, or `metadata.refund_id`), it is settled exactly as the provider's notification would settle it; when none is, the request never reached the provider and it is sent again, unchanged and under the same idempotency key `refund-<id>`, so it can never refund twice. Either way the answer is the refund as it is now: `succeeded` (with refund.created, and booking.refunded when nothing paid remains), `failed` (its amount is refundable again) or still `pending` (the provider accepted it; a notification settles it). Each refund settles once, whoever settles it first.",
        security: [{ apiKey: [] }],
        parameters: [
          {
            name: 'id',
            in: 'path',
            required: true,
            schema: { type: 'string', format: 'uuid' },
            description: 'the refund_id',
          },
        ],
        responses: {
          200: { description: 'The refund after reconciling', ...json(RefundResponse) },
          401: error('unauthorized: missing, malformed, unknown or revoked API key'),
          403: error("forbidden: the key's role is below manager"),
          404: error('refund_not_found (in this tenant; also any id that is not a uuid)'),
          409: error(
            'refund_not_pending (detail: {refund_id, status}): the refund is settled already; refund_in_progress (detail: {refund_id}): the provider did not answer, the refund stays pending, try again later',
          ),
          502: error(
            'payment_provider_error (detail: {refund_id, provider_code?, message?}): the provider refused the request sent again (the refund is kept as failed and its amount is refundable again), or refused to list the refunds (the refund stays pending)',
          ),
          503: error('payments_not_configured'),
        },
      },
    },
  },
  schemas: [RefundRequest, PartialRefundRequest, RefundResponse],
};

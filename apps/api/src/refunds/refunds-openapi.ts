import { PartialRefundRequest, RefundRequest, RefundResponse } from './refund-schemas';
import { error, json } from '../openapi/openapi-helpers';

// Path items for the lead to merge into openapi-document.ts; `#/components/schemas/Error` is
// the document's own Error schema.

const idempotencyKey = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  schema: { type: 'string', minLength: 1, maxLength: 255 },
  description:
    'Per API key: a retry with the same key and body gets the stored response (a 5xx is not stored); the same key with another body is 422, and a retry while the first request runs is 409.',
};

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
  },
  schemas: [RefundRequest, PartialRefundRequest, RefundResponse],
};

import { ok, uuidPathParam } from '../openapi/openapi-helpers';
import type { OpenApiFeature, OperationSpec } from '../openapi/openapi-operation';
import { apiKeyOf } from '../openapi/openapi-security';
import { PartialRefundRequest, RefundRequest, RefundResponse } from './refund-schemas';

const notConfigured = { payments_not_configured: 'STRIPE_SECRET_KEY is not set' };

/** What both ways of asking for a refund share. */
const refund = {
  method: 'post',
  access: apiKeyOf('manager'),
  responses: {
    201: ok('Refunded: the provider reports the refund succeeded', RefundResponse),
    202: ok('Accepted by the provider but still pending; a provider notification settles it', RefundResponse),
  },
  errors: {
    refund_exceeds_paid:
      'more than the card payment has left to refund, pending refunds included (detail: refundable_cents)',
    booking_not_found: 'no such booking in this tenant',
    booking_not_refundable:
      'no card payment, already refunded, reissued as a gift card, or keep_booking_active on a booking that is not confirmed',
    refund_in_progress:
      "the provider did not answer, failed, rate-limited the service or refused its key, none of which says whether an earlier try made the refund; it stays pending with its amount reserved until the provider's notification settles it or, when nothing reached the provider, the settle-stuck-booking-refunds job settles it from the provider's record or sends it again five minutes on, for up to 23 hours after it was made, while the provider keeps its idempotency key; older, it is left pending for an operator to reconcile. A provider 5xx after the request began is answered again under the same key for 24 hours, so such a refund stays pending that long (detail: refund_id)",
    payment_provider_error:
      'the provider refused or failed the refund; it is kept as failed and its amount is refundable again (detail: refund_id, provider_code, message)',
    ...notConfigured,
  },
  idempotency: 'Scoped to the route and the API key',
} satisfies Partial<OperationSpec>;

export const refundsOpenApi: OpenApiFeature = {
  tag: { name: 'Refunds', description: "Refunds of a booking's card payment through the payment provider." },
  operations: [
    {
      ...refund,
      path: '/api/payments/refunds',
      operationId: 'refundBooking',
      summary: "Refund all or part of a booking's card payment through the payment provider (manager+)",
      description:
        'Refunds never exceed what the card paid, across concurrent requests. A succeeded refund emits refund.created; when that leaves nothing paid (the card refunded in full and no gift card or cash part) the booking becomes `refunded`, its seats return to the slot and booking.refunded is emitted. Gift card and cash parts are not refunded through the provider; they can be reissued as a gift card.',
      requestBody: {
        schema: RefundRequest,
        example: { booking_id: '1f2e3d4c-5b6a-4798-8a9b-0c1d2e3f4a5b', amount_cents: 4500, reason: 'weather' },
      },
    },
    {
      ...refund,
      path: '/api/refunds/partial',
      operationId: 'refundBookingPartially',
      summary: 'Refund through the provider, optionally keeping the booking active (manager+)',
      description:
        'With keep_booking_active=true the booking stays confirmed and keeps its seats whatever is refunded, and each succeeded refund emits refund.created and refund.partial_no_cancel (with refund_total_cents, all succeeded refunds of the payments that paid for the booking). With false it behaves like POST /api/payments/refunds.',
      requestBody: {
        schema: PartialRefundRequest,
        example: {
          booking_id: '1f2e3d4c-5b6a-4798-8a9b-0c1d2e3f4a5b',
          amount_cents: 1500,
          reason: 'one guest fell ill',
          keep_booking_active: true,
        },
      },
    },
    {
      method: 'post',
      path: '/api/refunds/{id}/reconcile',
      operationId: 'reconcileRefund',
      summary: 'Settle a refund stuck in pending by asking the payment provider what happened (manager+)',
      description:
        "For a refund the provider never answered about (409 refund_in_progress). The provider's refunds of the payment intent are listed: when one is this refund (its provider id, or `metadata.refund_id`), it is settled exactly as the provider's notification would settle it; when none is, the request never reached the provider and it is sent again, unchanged and under the same idempotency key `refund-<id>`, so it can never refund twice. Either way the answer is the refund as it is now: `succeeded` (with refund.created, and booking.refunded when nothing paid remains), `failed` (its amount is refundable again) or still `pending` (the provider accepted it; a notification settles it). A refund the provider already named (`provider_refund_id` set) is never sent again: when the provider does not list it, it stays pending (409 refund_in_progress). Nor is one whose payment intent the provider does not know: every intent refunded here was the service's own, so the service's key is then most likely another account's or mode's, where the refund may exist unseen; it stays pending (409 refund_in_progress, logged as a warning). The refund is read again just before it is sent: one a notification or another reconcile settled meanwhile is not sent. Reconcile sends it again whatever its age, though the provider forgets an idempotency key 24 hours after its first use and a request sent after that is a new refund: for a refund older than a day, first make sure its amount was not given back another way (a dashboard refund without our metadata, cash). The settle-stuck-booking-refunds job does the same for refunds the provider never answered about, five minutes on, but sends again only refunds made less than 23 hours ago; older ones it only looks up, and leaves pending, logged, for this route. Each refund settles once, whoever settles it first.",
      access: apiKeyOf('manager'),
      parameters: [uuidPathParam('the refund_id')],
      responses: { 200: ok('The refund after reconciling', RefundResponse) },
      errors: {
        refund_not_found: 'no such refund in this tenant (also for an id that is not a uuid)',
        refund_not_pending: 'the refund is settled already (detail: refund_id, status)',
        refund_in_progress:
          'the provider did not answer, failed, rate-limited the service or refused its key, does not know the payment intent, or does not list the refund it named; the refund stays pending, try again later (detail: refund_id)',
        payment_provider_error:
          'the provider refused the request sent again (the refund is kept as failed and its amount is refundable again), or refused to list the refunds (the refund stays pending) (detail: refund_id, provider_code, message)',
        ...notConfigured,
      },
    },
  ],
  schemas: [RefundRequest, PartialRefundRequest, RefundResponse],
};

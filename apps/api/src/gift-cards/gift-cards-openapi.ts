import { ReissueGiftCardResponse, SellGiftCardRequest, SellGiftCardResponse } from './gift-card-schemas';
import { apiKey, error, json, idempotencyKeyParam } from '../openapi/openapi-helpers';

const idempotencyKey = idempotencyKeyParam(
  'Scoped to the route and the API key (a retry answers the same card and code)',
);

export const giftCardsOpenApi = {
  paths: {
    '/api/gift-cards/sell': {
      post: {
        summary: 'Sell a gift card at the till (staff+)',
        description:
          'The buyer has paid: by card (payment_reference: the provider payment id, usable for one sale) or in cash (shift_id: an open POS shift of this tenant). Issues a card with the full amount and a generated code, returned this once; only its hash is stored. Emits gift_card.sold (entity_type order, entity_id and payment_id = sale_id) without the code or recipient.',
        security: apiKey,
        parameters: [idempotencyKey],
        requestBody: { required: true, ...json(SellGiftCardRequest) },
        responses: {
          201: { description: 'Card issued; `code` is shown only in this answer', ...json(SellGiftCardResponse) },
          400: error(
            "invalid_body: amount outside 100..1000000, currency not 3 uppercase letters, card without payment_reference, cash without shift_id or with payment_reference, ...; payment_reference_invalid: no such PaymentIntent, not made for a gift card sale of this tenant (metadata tenant_id, purpose=gift_card_sale), a booking's, not succeeded, another amount or currency, or refunded",
          ),
          401: error('unauthorized: missing, malformed, unknown or revoked API key'),
          404: error('shift_not_found (in this tenant)'),
          409: error(
            'shift_closed: the shift is closed; payment_reference_used: the payment already paid for a sale or booking, in any tenant; idempotency_request_in_progress',
          ),
          422: error('idempotency_key_reused'),
        },
      },
    },
    '/api/bookings/{id}/reissue-gift-card': {
      post: {
        summary: 'Cancel a confirmed booking and reissue its paid amount as a new gift card (manager+)',
        description:
          'Instead of a provider refund: the seats go back to the slot, the booking becomes cancelled, and a new card holds what its succeeded payments took (gift card, card and cash) less what was refunded. Emits booking.reissued (with new_gift_card_code) and not booking.cancelled, which means a cancellation without refund.',
        security: apiKey,
        parameters: [
          { name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } },
          idempotencyKey,
        ],
        responses: {
          200: {
            description: 'Booking cancelled; the new card, its code shown this once',
            ...json(ReissueGiftCardResponse),
          },
          401: error('unauthorized: missing, malformed, unknown or revoked API key'),
          403: error("forbidden: the key's role is below manager"),
          404: error('booking_not_found (in this tenant)'),
          409: error(
            'booking_not_cancellable: not confirmed (held, already cancelled or refunded); booking_not_refundable: nothing paid; refund_in_progress: a provider refund is pending',
          ),
          422: error('idempotency_key_reused'),
        },
      },
    },
  },
  schemas: [SellGiftCardRequest, SellGiftCardResponse, ReissueGiftCardResponse],
};

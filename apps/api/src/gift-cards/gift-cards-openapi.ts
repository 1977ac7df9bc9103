import { ok, uuidPathParam } from '../openapi/openapi-helpers';
import type { OpenApiFeature } from '../openapi/openapi-operation';
import { apiKeyOf } from '../openapi/openapi-security';
import { ReissueGiftCardResponse, SellGiftCardRequest, SellGiftCardResponse } from './gift-card-schemas';

// Keys are the API key's, not the till's address: tills share addresses behind a venue's router.
const idempotency = 'Scoped to the route and the API key (a retry answers the same card and code)';

export const giftCardsOpenApi: OpenApiFeature = {
  tag: { name: 'Gift cards', description: 'Gift cards sold at the till, and bookings reissued as gift cards.' },
  operations: [
    {
      method: 'post',
      path: '/api/gift-cards/sell',
      operationId: 'sellGiftCard',
      summary: 'Sell a gift card at the till (staff+)',
      description:
        'The buyer has paid: by card (payment_reference: the provider payment id, usable for one sale) or in cash (shift_id: an open POS shift of this tenant). Issues a card with the full amount and a generated code, returned this once; only its hash is stored. Emits gift_card.sold (entity_type order, entity_id and payment_id = sale_id) without the code or recipient.',
      access: apiKeyOf('staff'),
      requestBody: {
        schema: SellGiftCardRequest,
        example: {
          amount_cents: 5000,
          currency: 'USD',
          payment_method: 'cash',
          shift_id: '9c1f7e0a-3d4b-4c2a-8e5f-6a7b8c9d0e1f',
        },
      },
      responses: { 201: ok('Card issued; `code` is shown only in this answer', SellGiftCardResponse) },
      errors: {
        invalid_body:
          'the body does not match its schema: amount outside 100..1000000, currency not 3 uppercase letters, card without payment_reference, cash without shift_id or with payment_reference, ...',
        payment_reference_invalid:
          "no such PaymentIntent, not made for a gift card sale of this tenant (metadata tenant_id, purpose=gift_card_sale), a booking's, not succeeded, another amount or currency, or refunded",
        shift_not_found: 'no such shift in this tenant',
        shift_closed: 'the shift is closed',
        payment_reference_used: 'the payment already paid for a sale or booking, in any tenant',
        payments_not_configured: 'a card sale cannot be verified: STRIPE_SECRET_KEY is not set',
      },
      idempotency,
    },
    {
      method: 'post',
      path: '/api/bookings/{id}/reissue-gift-card',
      operationId: 'reissueBookingAsGiftCard',
      summary: 'Cancel a confirmed booking and reissue its paid amount as a new gift card (manager+)',
      description:
        'Instead of a provider refund: the seats go back to the slot, the booking becomes cancelled, and a new card holds what its succeeded payments took (gift card, card and cash) less what was refunded. Emits booking.reissued (with new_gift_card_code) and not booking.cancelled, which means a cancellation without refund.',
      access: apiKeyOf('manager'),
      parameters: [uuidPathParam('the booking id')],
      responses: { 200: ok('Booking cancelled; the new card, its code shown this once', ReissueGiftCardResponse) },
      errors: {
        booking_not_found: 'no such booking in this tenant (also for an id that is not a uuid)',
        booking_not_cancellable: 'the booking is not confirmed (held, already cancelled or refunded)',
        booking_not_refundable: 'nothing was paid for the booking',
        refund_in_progress: 'a provider refund of the booking is pending, or a late card payment is being refunded',
      },
      idempotency,
    },
  ],
  schemas: [SellGiftCardRequest, SellGiftCardResponse, ReissueGiftCardResponse],
};

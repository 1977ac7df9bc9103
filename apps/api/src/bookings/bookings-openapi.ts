import { ok, uuidPathParam } from '../openapi/openapi-helpers';
import type { OpenApiFeature } from '../openapi/openapi-operation';
import { anonymous, apiKeyOf } from '../openapi/openapi-security';
import {
  BookingRequest,
  BookingResponse,
  CancelBookingResponse,
  CheckInByTokenRequest,
  CheckInResponse,
  OperatorBooking,
} from './booking-schemas';

const bookingId = uuidPathParam('the booking id');
const notFound = { booking_not_found: 'no such booking in this tenant (also for an id that is not a uuid)' };

export const bookingsOpenApi: OpenApiFeature = {
  tag: {
    name: 'Bookings',
    description: "A guest's booking from a hold, and what venue staff do with it: look up, check in, cancel.",
  },
  operations: [
    {
      method: 'post',
      path: '/api/bookings',
      operationId: 'createBooking',
      summary: 'Turn a hold into a booking with status held',
      description:
        "The customer is found or created by email within the tenant. A membership_token reserves one visit (the member's own admission) and guest_passes guest passes from the membership's allowance for the period of the slot's start (membership.visits_reserved), and takes the plan's member discount off the total when the plan discounts bookings (member_discount_cents; membership.discount_used): the discounted total is what the customer pays. Cancelling or refunding the booking releases them; check-in consumes them. A gift card pays what it can; when it pays everything the booking is confirmed at once (payment_complete), else it waits for a card payment (POST /api/embed/bookings/{id}/payment-intent). After a lost answer, a retry with the same Idempotency-Key and body gets the same booking, never a second one.",
      access: anonymous,
      requestBody: {
        schema: BookingRequest,
        example: {
          hold_id: '0b7d3c57-4f0e-4a8e-9a3c-1f6f7f3b8d21',
          slot_id: '2346bae7-86b9-44c7-8270-9f8a857f2cf4',
          experience_id: 'b908febc-c846-4446-8ac4-9687a7ee3f08',
          venue_id: '0e87297e-3ea7-4dc9-aa69-730fabb724e0',
          customer: { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace' },
          guest_count: 2,
          addons: [{ addon_id: '307122a1-e781-46f8-bfe7-954956497711', qty: 1 }],
        },
      },
      responses: { 201: ok('Booking created', BookingResponse) },
      errors: {
        invalid_guest_count:
          "guest_count is outside the experience's party size or above the seats held (detail: min_party_size, max_party_size, seats_held)",
        experience_slot_mismatch: 'slot_id, experience_id or venue_id is not those of the hold',
        addon_invalid: 'an addon is listed twice, or not offered for this experience (detail: addon_ids, reason)',
        addon_not_found: 'no such addon in this tenant (detail: addon_ids)',
        gift_card_not_found: 'no gift card with this code in this tenant',
        gift_card_currency_mismatch: "the gift card's currency is not the booking's",
        gift_card_empty: 'the gift card has no balance left',
        hold_not_found: 'no such hold, or it was booked already',
        capacity_exceeded: 'the seats of this hold are no longer available',
        hold_expired: 'the hold expired; place a new one',
        invalid_body:
          'the body does not match its schema, or guest_passes is above guest_count - 1 or sent without membership_token (`detail` lists each problem as `{field, message}`)',
        member_token_invalid:
          'membership_token is forged, expired, of another tenant or of an earlier holder, or names no membership',
        membership_not_active:
          'the membership is not active or past due, or a fixed-term membership ends before the slot starts (detail.status, expires_at)',
        holder_photo_required:
          "the membership's plan requires a photo and its holder's photo is not captured yet (detail.membership_id)",
        allowance_exhausted:
          "the visit or the guest passes would go beyond the membership's allowance for the slot's period (detail.kind, remaining, period_key)",
      },
      idempotency: 'Scoped to the route and the client address',
      rateLimitPerMinute: (config) => config.rateLimits.bookingsPerMinute,
    },
    {
      method: 'get',
      path: '/api/bookings/{id}',
      operationId: 'getBooking',
      summary: 'A booking as operators see it (staff+)',
      access: apiKeyOf('staff'),
      parameters: [bookingId],
      responses: { 200: ok('The booking, its customer, payments and check_in_token', OperatorBooking) },
      errors: notFound,
    },
    {
      method: 'get',
      path: '/api/bookings/{id}/qr.svg',
      operationId: 'getBookingQrCode',
      summary: 'The check-in token as a QR code (staff+)',
      access: apiKeyOf('staff'),
      parameters: [bookingId],
      responses: {
        200: {
          description: 'An SVG image of the QR code of check_in_token',
          content: { 'image/svg+xml': { schema: { type: 'string' } } },
        },
      },
      errors: notFound,
    },
    {
      method: 'post',
      path: '/api/bookings/{id}/cancel',
      operationId: 'cancelBooking',
      summary: 'Cancel a held or confirmed booking; no refund (manager+)',
      description:
        "The seats go back to the slot; a held booking's gift card part goes back on the card. Emits booking.cancelled. Refunds are their own operation.",
      access: apiKeyOf('manager'),
      parameters: [bookingId],
      responses: { 200: ok('Cancelled', CancelBookingResponse) },
      errors: {
        ...notFound,
        booking_not_cancellable: 'the booking is already cancelled or refunded',
        refund_in_progress:
          "a held booking's card payment is being refunded automatically (a late one, review_reason payment_refund_pending: the refund's outcome ends the booking; or one that did not cover it, payment_amount_mismatch: the booking stays payable)",
      },
    },
    {
      method: 'post',
      path: '/api/bookings/{id}/check-in',
      operationId: 'checkInBooking',
      summary: 'Check a confirmed booking in; repeat-safe (staff+)',
      description: 'The first check-in emits booking.checked_in; a repeat changes nothing and says so.',
      access: apiKeyOf('staff'),
      parameters: [bookingId],
      responses: { 200: ok('Checked in, now or before', CheckInResponse) },
      errors: { ...notFound, booking_not_checkable: 'the booking is not confirmed' },
    },
    {
      method: 'post',
      path: '/api/bookings/check-in-by-token',
      operationId: 'checkInBookingByToken',
      summary: 'Check in by a scanned QR token of this tenant; repeat-safe (staff+)',
      access: apiKeyOf('staff'),
      requestBody: {
        schema: CheckInByTokenRequest,
        example: { token: 'eyJ2IjoxLCJ0eXAiOiJjaGVja19pbiJ9.c2lnbmF0dXJl' },
      },
      responses: { 200: ok('Checked in, now or before', CheckInResponse) },
      errors: {
        invalid_body: 'the body is not JSON, or token is missing, empty or longer than 2048 characters',
        invalid_token: 'the token is not genuine, or has expired (a day after the visit)',
        booking_not_found: "the token's booking is not of this tenant",
        booking_not_checkable: 'the booking is not confirmed',
      },
    },
  ],
  schemas: [
    BookingRequest,
    BookingResponse,
    OperatorBooking,
    CancelBookingResponse,
    CheckInByTokenRequest,
    CheckInResponse,
  ],
};

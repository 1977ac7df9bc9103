import { ok, uuidPathParam } from '../openapi/openapi-helpers';
import type { OpenApiFeature } from '../openapi/openapi-operation';
import { apiKeyOf, managerKeyOrManageToken } from '../openapi/openapi-security';
import {
  PartyAmendmentRequest,
  PartyAmendmentResponse,
  RescheduleRequest,
  RescheduleResponse,
  TransferRequest,
  TransferResponse,
} from './amendment-schemas';

const bookingId = uuidPathParam('the booking id');
const notFound = 'no such booking in this tenant (also for an id that is not a uuid)';
const notAmendable = 'the booking is not confirmed';

/** Changes to confirmed bookings: another slot, another customer, another party size. */
export const amendmentsOpenApi: OpenApiFeature = {
  tag: {
    name: 'Amendments',
    description: 'Changes to a confirmed booking: another slot, another customer, another party size.',
  },
  operations: [
    {
      method: 'post',
      path: '/api/bookings/{id}/reschedule',
      operationId: 'rescheduleBooking',
      summary: 'Move a confirmed booking to another slot of its experience (manager+, or the customer)',
      description:
        'Atomic: the booking and both slots are locked, the new slot must not have started and must fit the guests beside its booked seats and live holds. Seats move with the booking; payment is unchanged even if the new slot is priced differently. Emits booking.rescheduled (rescheduled_by_user_id is the API key id, or null for the customer).',
      access: managerKeyOrManageToken,
      parameters: [bookingId],
      requestBody: {
        schema: RescheduleRequest,
        example: { slot_id: '5d0c6c1e-2b7a-4f5e-9a44-0f3e8f1c2b6d', reason: 'the guests asked for the afternoon' },
      },
      responses: { 200: ok('Rescheduled', RescheduleResponse) },
      errors: {
        invalid_body: "the body does not match its schema, or slot_id is already the booking's slot",
        experience_slot_mismatch: 'the slot is of another experience',
        booking_not_found: notFound,
        slot_not_found: 'no such slot in this tenant',
        booking_not_amendable: notAmendable,
        slot_unavailable: 'the new slot has started',
        capacity_exceeded: 'the new slot has no room for the guests',
        membership_not_active:
          'the booking was made with a membership that is no longer in use, or whose term ends before the new slot starts',
        allowance_exhausted:
          "the membership's allowance in the new slot's period has no room for the booking's visit or guest passes",
      },
    },
    {
      method: 'post',
      path: '/api/bookings/{id}/transfer',
      operationId: 'transferBooking',
      summary: 'Re-attribute a confirmed booking to another customer by email (manager+)',
      description:
        'The customer is found or created by email within the tenant (customer.created / customer.updated as for a booking); later booking events carry the new customer_email. Seats and payment are unchanged. Emits booking.transferred.',
      access: apiKeyOf('manager'),
      parameters: [bookingId],
      requestBody: {
        schema: TransferRequest,
        example: {
          customer: { email: 'grace@example.com', first_name: 'Grace', last_name: 'Hopper' },
          reason: 'a gift to a friend',
        },
      },
      responses: { 200: ok('Transferred', TransferResponse) },
      errors: {
        invalid_body: "the body does not match its schema, or the email is already the booking's customer",
        booking_not_found: notFound,
        booking_not_amendable: notAmendable,
        customer_anonymised: 'the customer with this email was anonymised',
      },
    },
    {
      method: 'post',
      path: '/api/bookings/{id}/party',
      operationId: 'updateBookingParty',
      summary: 'Add or remove guests on a confirmed booking (manager+)',
      description:
        "Added guests must fit the slot beside its booked seats and live holds (checked under the slot lock). The booking's total moves by guest delta × its unit price; the money delta is recorded, not collected or refunded. Emits booking.party_updated.",
      access: apiKeyOf('manager'),
      parameters: [bookingId],
      requestBody: { schema: PartyAmendmentRequest, example: { guest_count: 4, reason: 'two more friends' } },
      responses: { 200: ok('Party updated', PartyAmendmentResponse) },
      errors: {
        invalid_body: 'the body does not match its schema, or guest_count is unchanged',
        invalid_guest_count: "guest_count is outside 1..200 or the experience's party size",
        booking_not_found: notFound,
        booking_not_amendable: `${notAmendable}; or the booking was made with a membership (its visits and discount were counted for its party: cancel it and book again)`,
        capacity_exceeded: 'the slot has no room for the added guests',
      },
    },
  ],
  schemas: [
    RescheduleRequest,
    RescheduleResponse,
    TransferRequest,
    TransferResponse,
    PartyAmendmentRequest,
    PartyAmendmentResponse,
  ],
};

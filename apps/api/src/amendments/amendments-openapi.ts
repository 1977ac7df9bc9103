import {
  PartyAmendmentRequest,
  PartyAmendmentResponse,
  RescheduleRequest,
  RescheduleResponse,
  TransferRequest,
  TransferResponse,
} from './amendment-schemas';
import { apiKey, error, json } from '../openapi/openapi-helpers';

const bookingId = { name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } };
const manageToken = {
  name: 'X-Manage-Token',
  in: 'header',
  required: false,
  schema: { type: 'string' },
  description:
    'Customer self-service instead of an API key: the manage_token returned by POST /api/bookings for this booking (valid until its slot starts). Used only when no Authorization header is sent.',
};
const unauthorized = error('unauthorized: missing, malformed, unknown or revoked API key');
const forbidden = error("forbidden: the key's role is below manager");
const notFound = error('booking_not_found (in this tenant; also for an id that is not a uuid)');
const notAmendable = 'booking_not_amendable: the booking is not confirmed';

/** The booking amendment routes' path items, part of the OpenAPI document. */
export const amendmentsOpenApi = {
  paths: {
    '/api/bookings/{id}/reschedule': {
      post: {
        summary: 'Move a confirmed booking to another slot of its experience (manager+, or the customer)',
        description:
          'Atomic: the booking and both slots are locked, the new slot must not have started and must fit the guests beside its booked seats and live holds. Seats move with the booking; payment is unchanged even if the new slot is priced differently. Emits booking.rescheduled (rescheduled_by_user_id is the API key id, or null for the customer).',
        security: [{ apiKey: [] }, {}],
        parameters: [bookingId, manageToken],
        requestBody: { required: true, ...json('RescheduleRequest') },
        responses: {
          200: { description: 'Rescheduled', ...json('RescheduleResponse') },
          400: error(
            "invalid_body (also when slot_id is already the booking's slot), experience_slot_mismatch (slot of another experience)",
          ),
          401: error(
            'unauthorized (no credentials or a bad API key), invalid_token (bad manage token, or one for another booking), token_expired',
          ),
          403: forbidden,
          404: error('booking_not_found / slot_not_found (in this tenant)'),
          409: error(`${notAmendable}; slot_unavailable (the new slot has started); capacity_exceeded (no room)`),
        },
      },
    },
    '/api/bookings/{id}/transfer': {
      post: {
        summary: 'Re-attribute a confirmed booking to another customer by email (manager+)',
        description:
          'The customer is found or created by email within the tenant (customer.created / customer.updated as for a booking); later booking events carry the new customer_email. Seats and payment are unchanged. Emits booking.transferred.',
        security: apiKey,
        parameters: [bookingId],
        requestBody: { required: true, ...json('TransferRequest') },
        responses: {
          200: { description: 'Transferred', ...json('TransferResponse') },
          400: error("invalid_body (also when the email is already the booking's customer)"),
          401: unauthorized,
          403: forbidden,
          404: notFound,
          409: error(`${notAmendable}; customer_anonymised (the target customer was anonymised)`),
        },
      },
    },
    '/api/bookings/{id}/party': {
      post: {
        summary: 'Add or remove guests on a confirmed booking (manager+)',
        description:
          "Added guests must fit the slot beside its booked seats and live holds (checked under the slot lock). The booking's total moves by guest delta × its unit price; the money delta is recorded, not collected or refunded. Emits booking.party_updated.",
        security: apiKey,
        parameters: [bookingId],
        requestBody: { required: true, ...json('PartyAmendmentRequest') },
        responses: {
          200: { description: 'Party updated', ...json('PartyAmendmentResponse') },
          400: error(
            "invalid_body (also when guest_count is unchanged), invalid_guest_count (outside 1..200 or the experience's party size)",
          ),
          401: unauthorized,
          403: forbidden,
          404: notFound,
          409: error(`${notAmendable}; capacity_exceeded (no room for the added guests)`),
        },
      },
    },
  },
  schemas: [
    RescheduleRequest,
    RescheduleResponse,
    TransferRequest,
    TransferResponse,
    PartyAmendmentRequest,
    PartyAmendmentResponse,
  ],
};

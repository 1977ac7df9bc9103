import {
  CashPaymentRequest,
  CashPaymentResponse,
  ClosedShift,
  CloseShiftRequest,
  OpenShift,
  OpenShiftRequest,
} from './pos-schemas';
import { apiKey, error, json } from '../openapi/openapi-helpers';

const authErrors = {
  401: error('unauthorized: missing, malformed, unknown or revoked API key'),
  403: error("forbidden: the key's role is below the one this action needs"),
};

export const posOpenApi = {
  paths: {
    '/api/pos/shifts/open': {
      post: {
        summary: 'Open a POS register shift with its starting cash (staff+)',
        description:
          'One open shift per register: per venue, or one venue-less register per tenant when venue_id is left out. Emits shift.opened (entity_type shift).',
        security: apiKey,
        requestBody: { required: true, ...json(OpenShiftRequest) },
        responses: {
          201: { description: 'The open shift', ...json(OpenShift) },
          400: error('invalid_body: starting_cash_cents outside 0..10000000, venue_id not a uuid'),
          ...authErrors,
          404: error('venue_not_found (in this tenant)'),
          409: error('shift_already_open (detail.shift_id names it)'),
        },
      },
    },
    '/api/pos/shifts/close': {
      post: {
        summary: 'Close a shift with the counted cash (manager+)',
        description:
          'collected = cash booking payments + cash gift card sales taken in the shift; expected = starting + collected; variance = counted - expected (positive = over, negative = short). Emits shift.closed with all of them.',
        security: apiKey,
        requestBody: { required: true, ...json(CloseShiftRequest) },
        responses: {
          200: { description: 'The closed shift and its reconciliation', ...json(ClosedShift) },
          400: error('invalid_body'),
          ...authErrors,
          404: error('shift_not_found (in this tenant)'),
          409: error('shift_closed'),
        },
      },
    },
    '/api/pos/shifts/{id}/cash-payments': {
      post: {
        summary: 'Take cash for a held booking in an open shift; confirms it (staff+)',
        description:
          'The amount must be what is due (total less any gift card applied). Seats are checked again under the slot lock; booking.confirmed is recorded with method cash in the same transaction as the payment.',
        security: apiKey,
        parameters: [
          {
            name: 'id',
            in: 'path',
            required: true,
            schema: { type: 'string', format: 'uuid' },
            description: 'shift id',
          },
        ],
        requestBody: { required: true, ...json(CashPaymentRequest) },
        responses: {
          200: { description: 'Paid and confirmed', ...json(CashPaymentResponse) },
          400: error('invalid_body; payment_amount_mismatch (detail.amount_due_cents)'),
          ...authErrors,
          404: error('shift_not_found, booking_not_found (in this tenant)'),
          409: error(
            'shift_closed, booking_not_payable (not held), capacity_exceeded (its seats were sold after its hold expired; nothing recorded)',
          ),
        },
      },
    },
  },
  schemas: [OpenShiftRequest, CloseShiftRequest, CashPaymentRequest, OpenShift, ClosedShift, CashPaymentResponse],
};

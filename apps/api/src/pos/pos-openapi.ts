import { ok, uuidPathParam } from '../openapi/openapi-helpers';
import type { OpenApiFeature } from '../openapi/openapi-operation';
import { apiKeyOf } from '../openapi/openapi-security';
import {
  CashPaymentRequest,
  CashPaymentResponse,
  ClosedShift,
  CloseShiftRequest,
  OpenShift,
  OpenShiftRequest,
} from './pos-schemas';

const shiftNotFound = 'no such shift in this tenant';

export const posOpenApi: OpenApiFeature = {
  tag: { name: 'Point of sale', description: 'Register shifts at the venue and the cash taken in them.' },
  operations: [
    {
      method: 'post',
      path: '/api/pos/shifts/open',
      operationId: 'openShift',
      summary: 'Open a POS register shift with its starting cash (staff+)',
      description:
        'One open shift per register: per venue, or one venue-less register per tenant when venue_id is left out. Emits shift.opened (entity_type shift).',
      access: apiKeyOf('staff'),
      requestBody: {
        schema: OpenShiftRequest,
        example: { starting_cash_cents: 20000, venue_id: '0e87297e-3ea7-4dc9-aa69-730fabb724e0' },
      },
      responses: { 201: ok('The open shift', OpenShift) },
      errors: {
        invalid_body:
          'the body does not match its schema: starting_cash_cents outside 0..10000000, venue_id not a uuid, ...',
        venue_not_found: 'no such venue in this tenant',
        shift_already_open: 'the register has an open shift (detail.shift_id names it)',
      },
    },
    {
      method: 'post',
      path: '/api/pos/shifts/close',
      operationId: 'closeShift',
      summary: 'Close a shift with the counted cash (manager+)',
      description:
        'collected = cash booking payments + cash gift card sales + cash tenders of settled till orders taken in the shift - cash order refunds paid out of it; expected = starting + collected; variance = counted - expected (positive = over, negative = short). Emits shift.closed with all of them.',
      access: apiKeyOf('manager'),
      requestBody: {
        schema: CloseShiftRequest,
        example: { shift_id: '9c1f7e0a-3d4b-4c2a-8e5f-6a7b8c9d0e1f', counted_cash_cents: 29000 },
      },
      responses: { 200: ok('The closed shift and its reconciliation', ClosedShift) },
      errors: { shift_not_found: shiftNotFound, shift_closed: 'the shift is closed already' },
    },
    {
      method: 'post',
      path: '/api/pos/shifts/{id}/cash-payments',
      operationId: 'recordCashPayment',
      summary: 'Take cash for a held booking in an open shift; confirms it (staff+)',
      description:
        'The amount must be what is due (total less any gift card applied). Seats are checked again under the slot lock; booking.confirmed is recorded with method cash in the same transaction as the payment.',
      access: apiKeyOf('staff'),
      parameters: [uuidPathParam('the shift id')],
      requestBody: {
        schema: CashPaymentRequest,
        example: { booking_id: '1f2e3d4c-5b6a-4798-8a9b-0c1d2e3f4a5b', amount_cents: 9000 },
      },
      responses: { 200: ok('Paid and confirmed', CashPaymentResponse) },
      errors: {
        payment_amount_mismatch: 'amount_cents is not what is due (detail: amount_due_cents, currency)',
        shift_not_found: `${shiftNotFound} (also for an id that is not a uuid)`,
        booking_not_found: 'no such booking in this tenant',
        shift_closed: 'the shift is closed',
        booking_not_payable: 'the booking is not held, or a card payment of it is under review',
        capacity_exceeded: 'its seats were sold after its hold expired; nothing recorded',
      },
    },
  ],
  schemas: [OpenShiftRequest, CloseShiftRequest, CashPaymentRequest, OpenShift, ClosedShift, CashPaymentResponse],
};

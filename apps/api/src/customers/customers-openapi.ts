import { Customer, CustomerBooking, CustomerDetail, CustomerList, UpdateCustomerRequest } from './customer-schemas';
import { apiKey, error, json } from '../openapi/openapi-helpers';

const customerId = { name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } };
const bookingId = { name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } };
const unauthorized = error('unauthorized: missing, malformed, unknown or revoked API key');
const forbidden = error("forbidden: the key's role is below the one this action needs");
const customerNotFound = error('customer_not_found (in this tenant; also for an id that is not a uuid)');

/** The customer routes' and the v1 booking read's path items, part of the OpenAPI document. */
export const customersOpenApi = {
  paths: {
    '/api/v1/customers': {
      get: {
        summary: "The tenant's customers, full records, oldest first (staff+)",
        description:
          'Paginated on (created_at, id): pass next_starting_after as starting_after for the next page. Anonymised customers are listed with their personal fields null.',
        security: apiKey,
        parameters: [
          { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
          {
            name: 'starting_after',
            in: 'query',
            schema: { type: 'string', format: 'uuid' },
            description: 'next_starting_after of the previous page',
          },
          {
            name: 'email',
            in: 'query',
            schema: { type: 'string', minLength: 1, maxLength: 254 },
            description: 'only the customer with this address (exact, case-insensitive); never an anonymised one',
          },
        ],
        responses: {
          200: { description: 'A page of customers', ...json('CustomerList') },
          400: error('invalid_query'),
          401: unauthorized,
          403: forbidden,
          404: error('customer_not_found: starting_after names no customer of this tenant'),
        },
      },
    },
    '/api/v1/customers/{id}': {
      get: {
        summary: 'One customer, full record, with its 50 most recent bookings (staff+)',
        security: apiKey,
        parameters: [customerId],
        responses: {
          200: { description: 'The customer', ...json('CustomerDetail') },
          401: unauthorized,
          403: forbidden,
          404: customerNotFound,
        },
      },
    },
    '/api/v1/bookings/{id}': {
      get: {
        summary: 'A booking, full record (staff+); the same body as GET /api/bookings/{id}',
        security: apiKey,
        parameters: [bookingId],
        responses: {
          200: {
            description: 'The booking, its customer, payments and check_in_token',
            content: { 'application/json': { schema: { type: 'object' } } },
          },
          401: unauthorized,
          403: forbidden,
          404: error('booking_not_found (in this tenant)'),
        },
      },
    },
    '/api/customers/{id}': {
      patch: {
        summary: "Change a customer's contact data, tags or marketing preference (manager+)",
        description:
          'Only the fields sent are changed. customer.updated {customer_id, changed_fields} is recorded when a value actually changes; the same values again record nothing.',
        security: apiKey,
        parameters: [customerId],
        requestBody: { required: true, ...json('UpdateCustomerRequest') },
        responses: {
          200: { description: 'The customer after the change', ...json('Customer') },
          400: error('invalid_body'),
          401: unauthorized,
          403: forbidden,
          404: customerNotFound,
          409: error('customer_email_taken (another customer of the tenant has it), customer_anonymised'),
        },
      },
    },
    '/api/customers/{id}/anonymise': {
      post: {
        summary: "Erase a customer's personal data for good (manager+)",
        description:
          'The record stays for its bookings, with email, names and phone erased, no tags and no marketing consent. Anonymised customers never emit events; a later booking by the old address makes a new customer.',
        security: apiKey,
        parameters: [customerId],
        responses: {
          200: { description: 'The anonymised customer', ...json('Customer') },
          401: unauthorized,
          403: forbidden,
          404: customerNotFound,
          409: error('customer_anonymised: already anonymised'),
        },
      },
    },
  },
  schemas: [Customer, CustomerList, CustomerBooking, CustomerDetail, UpdateCustomerRequest],
};

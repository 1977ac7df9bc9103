import { OperatorBooking } from '../bookings/booking-schemas';
import { ok, pageParams, uuidPathParam } from '../openapi/openapi-helpers';
import type { OpenApiFeature } from '../openapi/openapi-operation';
import { apiKeyOf } from '../openapi/openapi-security';
import { Customer, CustomerBooking, CustomerDetail, CustomerList, UpdateCustomerRequest } from './customer-schemas';

const customerId = uuidPathParam('the customer id');
const customerNotFound = { customer_not_found: 'no such customer in this tenant (also for an id that is not a uuid)' };

/** The customer routes and the v1 booking read. */
export const customersOpenApi: OpenApiFeature = {
  tag: {
    name: 'Customers',
    description: "The v1 read API of full records (customers and bookings), and customers' corrections and erasure.",
  },
  operations: [
    {
      method: 'get',
      path: '/api/v1/customers',
      operationId: 'listCustomers',
      summary: "The tenant's customers, full records, oldest first (staff+)",
      description:
        'Paginated on (created_at, id): pass next_starting_after as starting_after for the next page. Anonymised customers are listed with their personal fields null.',
      access: apiKeyOf('staff'),
      parameters: [
        ...pageParams('next_starting_after of the previous page'),
        {
          name: 'email',
          in: 'query',
          required: false,
          schema: { type: 'string', minLength: 1, maxLength: 254 },
          description: 'only the customer with this address (exact, case-insensitive); never an anonymised one',
        },
      ],
      strictQuery: true,
      responses: { 200: ok('A page of customers', CustomerList) },
      errors: {
        invalid_query:
          'limit is not 1 to 100, starting_after is not a uuid, email is empty or too long, or an unknown parameter was sent',
        customer_not_found: 'starting_after names no customer of this tenant',
      },
    },
    {
      method: 'get',
      path: '/api/v1/customers/{id}',
      operationId: 'getCustomer',
      summary: 'One customer, full record, with its 50 most recent bookings (staff+)',
      access: apiKeyOf('staff'),
      parameters: [customerId],
      responses: { 200: ok('The customer', CustomerDetail) },
      errors: customerNotFound,
    },
    {
      method: 'get',
      path: '/api/v1/bookings/{id}',
      operationId: 'getBookingV1',
      summary: 'A booking, full record (staff+); the same body as GET /api/bookings/{id}',
      access: apiKeyOf('staff'),
      parameters: [uuidPathParam('the booking id')],
      responses: { 200: ok('The booking, its customer, payments and check_in_token', OperatorBooking) },
      errors: { booking_not_found: 'no such booking in this tenant (also for an id that is not a uuid)' },
    },
    {
      method: 'patch',
      path: '/api/customers/{id}',
      operationId: 'updateCustomer',
      summary: "Change a customer's contact data, tags or marketing preference (manager+)",
      description:
        'Only the fields sent are changed. customer.updated {customer_id, changed_fields} is recorded when a value actually changes; the same values again record nothing.',
      access: apiKeyOf('manager'),
      parameters: [customerId],
      requestBody: {
        schema: UpdateCustomerRequest,
        example: { phone: '+44 20 7946 0018', tags: ['vip'], marketing_opt_in: true },
      },
      responses: { 200: ok('The customer after the change', Customer) },
      errors: {
        ...customerNotFound,
        customer_email_taken: 'another customer of the tenant has this email',
        customer_anonymised: 'the customer was anonymised',
      },
    },
    {
      method: 'post',
      path: '/api/customers/{id}/anonymise',
      operationId: 'anonymiseCustomer',
      summary: "Erase a customer's personal data for good (manager+)",
      description:
        'The record stays for its bookings, with email, names and phone erased, no tags and no marketing consent. Anonymised customers never emit events; a later booking by the old address makes a new customer.',
      access: apiKeyOf('manager'),
      parameters: [customerId],
      responses: { 200: ok('The anonymised customer', Customer) },
      errors: { ...customerNotFound, customer_anonymised: 'already anonymised' },
    },
  ],
  schemas: [Customer, CustomerList, CustomerBooking, CustomerDetail, UpdateCustomerRequest],
};

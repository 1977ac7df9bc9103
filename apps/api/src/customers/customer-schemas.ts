import { Type, type Static } from '@sinclair/typebox';

const nullableDateTime = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);

const customerFields = {
  id: Type.String({ format: 'uuid' }),
  email: Type.Union([Type.String({ format: 'email' }), Type.Null()], { description: 'null once anonymised' }),
  first_name: Type.Union([Type.String(), Type.Null()], { description: 'null once anonymised' }),
  last_name: Type.Union([Type.String(), Type.Null()]),
  phone: Type.Union([Type.String(), Type.Null()]),
  tags: Type.Array(Type.String()),
  marketing_opt_in: Type.Boolean(),
  anonymised: Type.Boolean({ description: 'personal data erased; the record stays for its bookings' }),
  anonymised_at: nullableDateTime,
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  booking_count: Type.Integer({ minimum: 0, description: 'bookings of this customer, in any status' }),
};

/** The full customer record of the v1 read API. */
export const Customer = Type.Object(customerFields, { $id: 'Customer' });
export type Customer = Static<typeof Customer>;

export const CustomerList = Type.Object(
  {
    data: Type.Array(Type.Ref('Customer')),
    next_starting_after: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
      description: 'pass as starting_after for the next page; null on the last page',
    }),
  },
  { $id: 'CustomerList' },
);

export const CustomerBooking = Type.Object(
  {
    booking_id: Type.String({ format: 'uuid' }),
    status: Type.String({ description: 'held, confirmed, cancelled or refunded' }),
    slot_starts_at: Type.String({ format: 'date-time' }),
    experience_id: Type.String({ format: 'uuid' }),
    total_cents: Type.Integer({ minimum: 0 }),
    currency: Type.String({ minLength: 3, maxLength: 3 }),
  },
  { $id: 'CustomerBooking' },
);

export const CustomerDetail = Type.Object(
  {
    ...customerFields,
    bookings: Type.Array(Type.Ref('CustomerBooking'), {
      maxItems: 50,
      description: 'the 50 most recent bookings, newest first',
    }),
  },
  { $id: 'CustomerDetail' },
);

export const CustomersQuery = Type.Object(
  {
    limit: Type.Optional(Type.String({ pattern: '^([1-9]|[1-9][0-9]|100)$', description: '1 to 100, default 20' })),
    starting_after: Type.Optional(
      Type.String({ format: 'uuid', description: 'the next_starting_after of the previous page' }),
    ),
    email: Type.Optional(Type.String({ minLength: 1, maxLength: 254, description: 'exact, case-insensitive' })),
  },
  { additionalProperties: false },
);

const name = Type.String({ minLength: 1, maxLength: 100 });

export const UpdateCustomerRequest = Type.Object(
  {
    email: Type.Optional(Type.String({ format: 'email', maxLength: 254, description: 'stored trimmed, lower-case' })),
    first_name: Type.Optional(name),
    last_name: Type.Optional(Type.Union([name, Type.Null()])),
    phone: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 40 }), Type.Null()])),
    tags: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 50 }), {
        maxItems: 50,
        uniqueItems: true,
        description: 'replaces the tags; compared as a set',
      }),
    ),
    marketing_opt_in: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1, $id: 'UpdateCustomerRequest' },
);
export type UpdateCustomerRequest = Static<typeof UpdateCustomerRequest>;

import { Type } from '@sinclair/typebox';
import { Id } from './common';

export const PeopleEvents = {
  'waiver.signed': Type.Object({ waiver_id: Id('the signature'), booking_id: Id() }),
  'customer.created': Type.Object({
    customer_id: Id(),
    source: Type.Union([Type.Literal('booking'), Type.Literal('transfer'), Type.Literal('order')], {
      description: 'what made the customer',
    }),
  }),
  'customer.updated': Type.Object({
    customer_id: Id(),
    changed_fields: Type.Array(Type.String(), {
      description: 'of email, first_name, last_name, phone, tags, marketing_opt_in',
    }),
  }),
};

import { Type, type TSchema } from '@sinclair/typebox';

/** Ids are uuids; an actor is the id of the API key that acted. */
export const Id = (description?: string) => Type.String({ format: 'uuid', ...(description && { description }) });
export const Cents = (description?: string) => Type.Integer({ ...(description && { description }) });
export const Currency = Type.String({ minLength: 3, maxLength: 3, description: 'ISO 4217 code' });
export const Timestamp = (description?: string) =>
  Type.String({ format: 'date-time', ...(description && { description }) });
/** A calendar day, `YYYY-MM-DD`, with no time of day or zone. */
export const DateOnly = (description?: string) => Type.String({ format: 'date', ...(description && { description }) });
export const Nullable = <T extends TSchema>(schema: T, description?: string) =>
  Type.Union([schema, Type.Null()], description ? { description } : {});

/** What every booking event says about its booking, read in the producer's transaction. */
export const BookingSubject = {
  booking_id: Id(),
  experience_id: Id(),
  venue_id: Id(),
  slot_id: Id(),
  customer_email: Type.String({ description: "the booking's customer's email" }),
};

/** Fields every event's data carries besides its own. */
export const CommonFields = {
  event_id: Id('the event (the same for every endpoint and attempt)'),
  schema_version: Type.Integer({ description: 'the version of this event’s data' }),
  entity_type: Type.String({ description: 'booking, customer, wallet, membership, order or shift' }),
  entity_id: Id('the id of the entity the event is about'),
};

/** The customer as it is when each attempt is built, added to customer events at delivery. */
export const CustomerContactAtDelivery = {
  email: Type.String(),
  first_name: Type.String(),
  last_name: Type.Union([Type.String(), Type.Null()]),
  phone: Type.Union([Type.String(), Type.Null()]),
};

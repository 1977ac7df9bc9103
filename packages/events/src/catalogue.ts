/**
 * Events this service records, with the `schema_version` each is delivered at. Version 2 is the
 * spec's current booking schema (the confirmed-booking sample carries 2).
 */
export const EVENT_SCHEMA_VERSIONS = {
  'booking.created': 2,
  'booking.confirmed': 2,
  'booking.cancelled': 2,
  'booking.refunded': 2,
  // Not operator-subscribable (the spec leaves it out of the catalogue), recorded all the same.
  'booking.checked_in': 2,
} as const;

export type EventName = keyof typeof EVENT_SCHEMA_VERSIONS;

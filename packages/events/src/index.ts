export { recordEvent, eventRow } from './record-event';
export type { EventInput, EventRow } from './record-event';
export type { EventName, SubscribableEvent } from './catalogue';
export { EVENT_SCHEMA_VERSIONS, SUBSCRIBABLE_EVENTS, isSubscribable, endpointWants } from './catalogue';
export { EVENT_ENTITY, EVENT_FIELDS, EVENT_SECRET_FIELDS, deliveredDataSchema } from './payloads';
export type { EntityType, EventData, EventFields, EventSecretFields, RecordedEventName } from './payloads';
export { bookingEventSubject } from './subjects/booking-subject';

export { recordEvent, OUTBOX_CHANNEL } from './record-event';
export type { EventName, SubscribableEvent } from './catalogue';
export { EVENT_SCHEMA_VERSIONS, SUBSCRIBABLE_EVENTS, isSubscribable, endpointWants } from './catalogue';

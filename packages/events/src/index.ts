export { recordEvent } from './record-event';
export type { EventName } from './catalogue';
export { EVENT_SCHEMA_VERSIONS } from './catalogue';

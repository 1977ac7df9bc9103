import { FormatRegistry, Type, type TObject } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { EVENT_FIELDS, type RecordedEventName } from './index';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
if (!FormatRegistry.Has('uuid')) FormatRegistry.Set('uuid', (value) => UUID.test(value));
if (!FormatRegistry.Has('date-time'))
  FormatRegistry.Set('date-time', (value) => !Number.isNaN(Date.parse(value)) && /T/.test(value));
/** A real calendar day (2026-02-30 is refused), as DateOnly() fields carry. */
function isDay(value: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return false;
  const [year, month, day] = match.slice(1).map(Number) as [number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}
if (!FormatRegistry.Has('date')) FormatRegistry.Set('date', (value) => isDay(value));

const strict = new Map<string, TObject>();
/** The event's fields schema with nothing beyond its properties. */
function strictSchema(name: RecordedEventName): TObject {
  let schema = strict.get(name);
  if (!schema) {
    schema = Type.Object((EVENT_FIELDS[name] as TObject).properties, { additionalProperties: false });
    strict.set(name, schema);
  }
  return schema;
}

/**
 * In tests, every recorded event is checked against its schema at run time too, so each
 * integration test that produces an event is also a payload check (types cannot see a value
 * that is wrong but well typed, such as a malformed date). In production the compiler's check is
 * the one that counts, and nothing is paid at run time.
 */
export function assertRecordedFields(name: RecordedEventName, entityType: string, fields: unknown): void {
  if (process.env.NODE_ENV !== 'test') return;
  recordedInThisProcess.add(`${name} ${entityType}`);
  const schema = strictSchema(name);
  if (Value.Check(schema, fields)) return;
  const problems = [...Value.Errors(schema, fields)].map((error) => `${error.path || '/'} ${error.message}`);
  throw new Error(`event ${name} recorded with fields its schema refuses: ${problems.join('; ')}`);
}

const recordedInThisProcess = new Set<string>();

/**
 * Tests only: every `<event name> <entity type>` this process recorded, so the test suite can
 * tell which catalogue events no test produced (test/emitted-events-setup.ts).
 */
export function eventsRecordedInThisProcess(): ReadonlySet<string> {
  return recordedInThisProcess;
}

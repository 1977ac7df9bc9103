/**
 * RFC 3339 date-times, the `date-time` of the published schemas: a date, `T`, a time to the
 * second with an optional fraction, and `Z` or a `±hh:mm` offset.
 */
const RFC_3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

// PostgreSQL's timestamptz has no year 0, and RFC 3339 has no year beyond 9999: the instants
// between are the ones both JavaScript and the database hold.
const EARLIEST = Date.parse('0001-01-01T00:00:00Z');
const LATEST = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * Whether `text` is an RFC 3339 date-time that names an instant JavaScript and PostgreSQL both
 * represent, so `new Date(text)` is that instant and the database stores it. Leap seconds
 * (`23:59:60`) are refused: JavaScript has none and reads them as Invalid Date.
 */
export function isStorableDateTime(text: string): boolean {
  const match = RFC_3339.exec(text);
  if (!match) return false;
  const [, year, month, day, hour, minute, second, offsetHours = '00', offsetMinutes = '00'] = match;
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) return false;
  if (Number(offsetHours) > 23 || Number(offsetMinutes) > 59) return false;
  // Date.parse rolls 2026-02-30 over into March: a day must be a day of its month.
  const date = `${year}-${month}-${day}`;
  const midnight = Date.parse(`${date}T00:00:00Z`);
  if (Number.isNaN(midnight) || new Date(midnight).toISOString().slice(0, 10) !== date) return false;
  const instant = Date.parse(text);
  return instant >= EARLIEST && instant <= LATEST;
}

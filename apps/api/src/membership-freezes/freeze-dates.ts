/**
 * Freeze dates are calendar days (UTC), inclusive at both ends. A day is kept as the Date of its
 * midnight UTC, which is what Prisma reads from and writes to a PostgreSQL `date`.
 */
const DAY_MS = 86_400_000;

/** The calendar day (UTC) of an instant. */
export function dayOf(at: Date): Date {
  return new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS);
}

/** A YYYY-MM-DD string as its day; undefined when it is not a real calendar day. */
export function parseDay(text: string): Date | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return undefined;
  const day = new Date(`${text}T00:00:00Z`);
  return Number.isNaN(day.getTime()) || formatDay(day) !== text ? undefined : day;
}

export function formatDay(day: Date): string {
  return day.toISOString().slice(0, 10);
}

export function addDays(at: Date, days: number): Date {
  return new Date(at.getTime() + days * DAY_MS);
}

/** Whole days from `from` to `to` (days, not instants: both are midnights). */
export function daysBetween(from: Date, to: Date): number {
  return Math.round((dayOf(to).getTime() - dayOf(from).getTime()) / DAY_MS);
}

/** The days a freeze from `startsOn` to `endsOn`, both included, covers. */
export function freezeDays(startsOn: Date, endsOn: Date): number {
  return daysBetween(startsOn, endsOn) + 1;
}

/**
 * The days a freeze has kept the membership frozen by `today`: every day from its first up to
 * yesterday, at most all its days. The member has today back when a freeze is ended early, and
 * a freeze ended on its first day froze nothing.
 */
export function frozenDaysBy(freeze: { startsOn: Date; endsOn: Date }, today: Date): number {
  const through = Math.min(dayOf(today).getTime(), addDays(freeze.endsOn, 1).getTime());
  return Math.max(0, daysBetween(freeze.startsOn, new Date(through)));
}

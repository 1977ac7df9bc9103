import { addDays } from '../membership-freezes/freeze-dates';

/**
 * When a fixed-term membership started at `startsAt` expires: `term_days` days later, or
 * `term_months` calendar months later on the same day of the month and time (the last day of a
 * shorter month: 31 January + 1 month is 28 or 29 February).
 */
export function termExpiry(startsAt: Date, plan: { termDays: number | null; termMonths: number | null }): Date {
  if (plan.termDays !== null) return addDays(startsAt, plan.termDays);
  const months = plan.termMonths ?? 0;
  const target = new Date(startsAt.getTime());
  const day = target.getUTCDate();
  target.setUTCDate(1);
  target.setUTCMonth(target.getUTCMonth() + months);
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(day, lastDay));
  return target;
}

import type { MembershipPlan } from '@booking/db';
import { AppError } from '@booking/domain';
import { addDays, dayOf, formatDay, freezeDays } from './freeze-dates';

/** What the rules of a freeze look at: the plan, the membership's dates, and its other freezes this year. */
export interface FreezeRequestFacts {
  plan: Pick<
    MembershipPlan,
    'billing' | 'freezeAllowed' | 'freezeMinDays' | 'freezeMaxDays' | 'freezesPerYear' | 'freezeNoticeDays'
  >;
  expiresAt: Date | null;
  startsOn: Date;
  endsOn: Date;
  today: Date;
  /** Freezes of the membership, not cancelled, that start in the calendar year of startsOn. */
  freezesThatYear: number;
}

const violated = (rule: string, detail: Record<string, unknown>) =>
  new AppError('freeze_rules_violated', { rule, ...detail });

/**
 * The plan's freeze rules, in the order a member would want to hear them; 422
 * freeze_rules_violated naming the first rule broken (`detail.rule`) and its limit. Days are
 * counted inclusively. A recurring membership's freeze must start on its next renewal date: the
 * subscription is then paused with nothing of the paid period left to credit and no invoice in
 * collection, and resuming it restarts the billing period, moving the renewal out by exactly the
 * days frozen. A fixed-term freeze must start within the term.
 */
export function assertFreezeRules(facts: FreezeRequestFacts): void {
  const { plan, startsOn, endsOn, today } = facts;
  if (!plan.freezeAllowed) throw violated('freeze_allowed', {});
  const days = freezeDays(startsOn, endsOn);
  if (days < plan.freezeMinDays) throw violated('min_days', { min_days: plan.freezeMinDays, days });
  if (days > plan.freezeMaxDays) throw violated('max_days', { max_days: plan.freezeMaxDays, days });
  const earliest = addDays(dayOf(today), plan.freezeNoticeDays);
  if (startsOn < earliest) {
    throw violated('notice', { notice_days: plan.freezeNoticeDays, earliest_starts_on: formatDay(earliest) });
  }
  if (facts.freezesThatYear >= plan.freezesPerYear) {
    throw violated('freezes_per_year', {
      freezes_per_year: plan.freezesPerYear,
      year: startsOn.getUTCFullYear(),
    });
  }
  const lastDay = facts.expiresAt && dayOf(facts.expiresAt);
  if (plan.billing === 'recurring') {
    if (!lastDay || startsOn.getTime() !== lastDay.getTime()) {
      throw violated('renewal_date', { renewal_date: lastDay && formatDay(lastDay) });
    }
  } else if (!lastDay || startsOn > lastDay) {
    throw violated('within_term', { expires_on: lastDay && formatDay(lastDay) });
  }
}

import { AppError } from '@booking/domain';

/** The plan fields whose combination must hold, as stored. */
export interface PlanShape {
  billing: 'fixed_term' | 'recurring';
  termDays: number | null;
  termMonths: number | null;
  interval: 'month' | 'year' | null;
  freezeMinDays: number;
  freezeMaxDays: number;
  freezeFeeCents: number;
  benefitNames: string[];
}

/**
 * 400 plan_invalid unless the plan's fields fit together (the schema checked each alone): a
 * fixed-term plan has a term in days or in months (one of them) and no interval; a recurring plan
 * an interval and no term; freezes last at least min and at most max days; only recurring plans
 * charge a freeze fee (a fixed-term freeze moves the expiry out instead); benefit names are unique.
 */
export function assertPlanShape(plan: PlanShape): void {
  const problems: string[] = [];
  if (plan.billing === 'fixed_term') {
    if ((plan.termDays === null) === (plan.termMonths === null)) {
      problems.push('a fixed-term plan needs term_days or term_months (one of them)');
    }
    if (plan.interval !== null) problems.push('a fixed-term plan has no interval');
    if (plan.freezeFeeCents > 0) problems.push('freeze_fee_cents is for recurring plans only');
  } else {
    if (plan.interval === null) problems.push('a recurring plan needs an interval');
    if (plan.termDays !== null || plan.termMonths !== null)
      problems.push('a recurring plan has no term_days or term_months');
  }
  if (plan.freezeMaxDays < plan.freezeMinDays) problems.push('freeze_max_days is below freeze_min_days');
  const names = plan.benefitNames.map((name) => name.trim().toLowerCase());
  if (new Set(names).size !== names.length) problems.push('benefit names must be unique');
  if (problems.length > 0) throw new AppError('plan_invalid', { problems });
}

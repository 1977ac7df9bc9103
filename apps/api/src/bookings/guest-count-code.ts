import type { SchemaProblem } from '../http/validation';

/**
 * The error code of a booking or party body: `invalid_guest_count` when the only problem is a
 * well-formed guest count outside its bounds (the spec's code for that), `invalid_body` for
 * anything else, a missing or non-integer count included.
 */
export function guestCountCode(problems: SchemaProblem[]): 'invalid_guest_count' | 'invalid_body' {
  const outOfBounds = (problem: SchemaProblem) =>
    problem.field === '/guest_count' && (problem.keyword === 'minimum' || problem.keyword === 'maximum');
  return problems.every(outOfBounds) ? 'invalid_guest_count' : 'invalid_body';
}

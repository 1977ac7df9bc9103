import { AppError } from './app-error';

export const MEMBERSHIP_STATUSES = [
  'pending_payment',
  'active',
  'frozen',
  'past_due',
  'paused_for_payment',
  'expired',
  'ended',
  'cancelled',
] as const;
export type MembershipStatus = (typeof MEMBERSHIP_STATUSES)[number];

/**
 * Statuses a membership never leaves: a late payment, notification or job finds them and changes
 * nothing (money that arrives for them is given back).
 */
export const TERMINAL_MEMBERSHIP_STATUSES = ['expired', 'ended', 'cancelled'] as const satisfies MembershipStatus[];

/** Statuses of a membership that is still someone's: one recurring membership per customer and plan among these. */
export const LIVE_MEMBERSHIP_STATUSES = [
  'pending_payment',
  'active',
  'frozen',
  'past_due',
  'paused_for_payment',
] as const satisfies MembershipStatus[];

/**
 * What may be done to a membership in each status: the one table every use case asks. Visits,
 * guest passes, benefits and the member discount need an active membership (a past-due one
 * keeps its access while Stripe retries; paused for payment loses it). Freezes, plan changes
 * and holder changes need it active; cancelling works on any live paid membership.
 */
const ALLOWED = {
  use: ['active', 'past_due'],
  freeze: ['active'],
  changePlan: ['active', 'past_due'],
  changeHolder: ['active', 'frozen', 'past_due', 'paused_for_payment'],
  cancel: ['active', 'frozen', 'past_due', 'paused_for_payment'],
} as const satisfies Record<string, readonly MembershipStatus[]>;

export type MembershipAction = keyof typeof ALLOWED;

export function membershipAllows(status: MembershipStatus, action: MembershipAction): boolean {
  return (ALLOWED[action] as readonly MembershipStatus[]).includes(status);
}

/** Throws 409 membership_not_active when the membership's status does not allow the action. */
export function assertMembershipAllows(status: MembershipStatus, action: MembershipAction): void {
  if (!membershipAllows(status, action)) throw new AppError('membership_not_active', { status });
}

export function isTerminalMembership(status: MembershipStatus): boolean {
  return (TERMINAL_MEMBERSHIP_STATUSES as readonly MembershipStatus[]).includes(status);
}

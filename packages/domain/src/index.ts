export { AppError } from './app-error';
export type { ErrorCode } from './app-error';
export { priceBooking } from './pricing';
export type { PricedBooking, PricedAddon } from './pricing';
export { seatsRemaining } from './capacity';
export { UUID_PATTERN, isUuid } from './uuid';
export { BOOKING_STATUSES, assertBookingAllows, bookingAllows } from './booking-status';
export type { BookingAction, BookingStatus } from './booking-status';
export {
  MEMBERSHIP_STATUSES,
  LIVE_MEMBERSHIP_STATUSES,
  TERMINAL_MEMBERSHIP_STATUSES,
  assertMembershipAllows,
  isTerminalMembership,
  membershipAllows,
} from './membership-status';
export type { MembershipAction, MembershipStatus } from './membership-status';

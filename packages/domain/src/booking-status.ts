import { AppError, type ErrorCode } from './app-error';

export const BOOKING_STATUSES = ['held', 'confirmed', 'cancelled', 'refunded'] as const;
export type BookingStatus = (typeof BOOKING_STATUSES)[number];

/**
 * What may be done to a booking in each status: the one table every use case asks, so a rule
 * changes here and nowhere else. A held booking waits for its payment; a confirmed one holds
 * seats; cancelled and refunded are final.
 */
const ALLOWED = {
  /** Cancel (seats go back; nothing is refunded). */
  cancel: ['held', 'confirmed'],
  /** Cancel and give the paid amount back as a gift card: only what was confirmed was paid. */
  reissue: ['confirmed'],
  checkIn: ['confirmed'],
  /** Reschedule, change the party, transfer: only a confirmed booking has seats to move. */
  amend: ['confirmed'],
  /** Read or sign its waiver: while the booking stands. */
  signWaiver: ['held', 'confirmed'],
  /** Take a card or cash payment that confirms it. */
  pay: ['held'],
  /** Refund what was paid (a cancelled booking may still have money to give back). */
  refund: ['held', 'confirmed', 'cancelled'],
  /** Refund part of the money while the guests keep their seats. */
  refundKeepingActive: ['confirmed'],
} as const satisfies Record<string, readonly BookingStatus[]>;

export type BookingAction = keyof typeof ALLOWED;

/** The conflict each refused action answers with (all 409s, see docs/errors.md). */
const REFUSAL: Record<BookingAction, ErrorCode> = {
  cancel: 'booking_not_cancellable',
  reissue: 'booking_not_cancellable',
  checkIn: 'booking_not_checkable',
  amend: 'booking_not_amendable',
  signWaiver: 'booking_not_amendable',
  pay: 'booking_not_payable',
  refund: 'booking_not_refundable',
  refundKeepingActive: 'booking_not_refundable',
};

export function bookingAllows(status: BookingStatus, action: BookingAction): boolean {
  return (ALLOWED[action] as readonly BookingStatus[]).includes(status);
}

/** Throws the action's 409 when the booking's status does not allow it. */
export function assertBookingAllows(status: BookingStatus, action: BookingAction): void {
  if (!bookingAllows(status, action)) throw new AppError(REFUSAL[action], `the booking is ${status}`);
}

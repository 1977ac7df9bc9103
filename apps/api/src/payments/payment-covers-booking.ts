/** review_reason of a held booking that a card payment did not cover (coversBooking). */
export const PAYMENT_AMOUNT_MISMATCH = 'payment_amount_mismatch';

/**
 * Whether a card payment pays what a held booking still owes: its total (the member discount is
 * taken off it already) less its gift card part, in the booking's currency, as
 * create-payment-intent asks for it. An intent made elsewhere (Stripe's dashboard, another
 * integration on the account) can name the booking with any amount or currency; a short or
 * foreign one must not confirm it. More than owed does: the booking is paid in full, and the
 * surplus is the operator's to give back (a keep-booking-active refund), which is kinder than
 * refusing a customer who paid enough.
 */
export function coversBooking(
  paid: { amountCents: number; currency: string },
  booking: { totalCents: number; giftCardAppliedCents: number; currency: string },
): boolean {
  // Stripe writes currencies in lower case, bookings keep ISO 4217 upper case.
  if (paid.currency.toUpperCase() !== booking.currency.toUpperCase()) return false;
  return paid.amountCents >= booking.totalCents - booking.giftCardAppliedCents;
}

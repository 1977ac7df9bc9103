/**
 * Every row and advisory lock the API takes, each scoped to its tenant, each checked against the
 * house lock order (see lock-order.ts). Use cases lock through here and nowhere else.
 */
export { lockRegister, lockSaleReference } from './advisory-locks';
export { findBookingForUpdate, lockBooking, type LockedBooking } from './booking-lock';
export { lockCustomer, lockCustomerByEmail } from './customer-locks';
export { lockGiftCard, lockGiftCardByCode } from './gift-card-locks';
export { LOCK_ORDER, LockOrderError, claimLock, type LockKind } from './lock-order';
export {
  lockCardPayment,
  lockGiftCardPayments,
  lockPaymentByReference,
  lockSucceededPayments,
  type LockedPayment,
} from './payment-locks';
export { lockRefund, type LockedRefund } from './refund-lock';
export { lockOpenShift, type LockedShift } from './shift-lock';
export { lockSlot, lockSlots, shareSlot, type LockedSlot } from './slot-locks';
export { ANY_TENANT, type TenantScope } from './tenant-scope';

/**
 * Every row and advisory lock the API takes, each checked against the house lock order (see
 * lock-order.ts). Locks that find a row by an id the caller sent are scoped to a tenant; the
 * others take ids of rows already found in the tenant (a booking's slot, payments, refund, card).
 * Use cases lock through here and nowhere else.
 */
export { lockRegister, lockSaleReference } from './advisory-locks';
export { findBookingForUpdate, lockBooking, lockBookingUnlessBusy, type LockedBooking } from './booking-lock';
export { lockCustomer, lockCustomerByEmail } from './customer-locks';
export { lockGiftCard, lockGiftCardByCode, lockGiftCards, type LockedGiftCard } from './gift-card-locks';
export {
  lockCardPayment,
  lockGiftCardPayments,
  lockPaymentByReference,
  lockSucceededPayments,
  type LockedPayment,
} from './payment-locks';
export { lockRefund, type LockedRefund } from './refund-lock';
export { lockOpenShift, type LockedShift } from './shift-lock';
export {
  lockMembership,
  lockMembershipBySubscription,
  lockMembershipUnlessBusy,
  type LockedMembership,
} from './membership-lock';
export { lockOrder, lockOrderByPaymentIntent, lockOrderUnlessBusy, type LockedOrder } from './order-lock';
export { lockSlot, lockSlots, type LockedSlot } from './slot-locks';
export { ANY_TENANT, type TenantScope } from './tenant-scope';
export { lockWallet, lockWallets, lockWalletUnlessBusy, type LockedWallet } from './wallet-locks';

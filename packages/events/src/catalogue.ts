import type { RecordedEventName } from './payloads';

/**
 * Events this service records, with the `schema_version` each is delivered at. Version 2 is the
 * spec's current booking schema (the confirmed-booking sample carries 2).
 */
export const EVENT_SCHEMA_VERSIONS = {
  'booking.created': 2,
  'booking.confirmed': 2,
  'booking.cancelled': 2,
  'booking.refunded': 2,
  'booking.reissued': 2,
  'booking.rescheduled': 2,
  'booking.transferred': 2,
  'booking.party_updated': 2,
  'refund.created': 1,
  'refund.partial_no_cancel': 1,
  // Version 2 carries evidence identifiers only: no signer names, signature bytes or links.
  'waiver.signed': 2,
  'gift_card.sold': 1,
  'gift_card.redeemed': 1,
  'shift.opened': 1,
  'shift.closed': 1,
  'customer.created': 1,
  'customer.updated': 1,
  'order.created': 1,
  'order.confirmed': 1,
  'order.cancelled': 1,
  'wallet.funded': 1,
  'wallet.spent': 1,
  'wallet.refunded': 1,
  'wallet.funding_returned': 1,
  'wallet.refund_review_required': 1,
  'wallet.expired': 1,
  'wallet.access_changed': 1,
  'membership.activated': 1,
  'membership.imported': 1,
  'membership.expired': 1,
  'membership.benefit_used': 1,
  'membership.guest_pass_used': 1,
  'membership.visits_reserved': 1,
  'membership.discount_used': 1,
  'membership.frozen': 1,
  'membership.unfrozen': 1,
  'membership.holder_changed': 1,
  'membership.holder_photo_captured': 1,
  'membership.subscription_started': 1,
  'membership.payment_succeeded': 1,
  'membership.renewed': 1,
  'membership.payment_failed': 1,
  'membership.past_due': 1,
  'membership.paused_for_payment': 1,
  'membership.ended': 1,
  'membership.plan_change_requested': 1,
  'membership.plan_changed': 1,
  'membership.plan_change_cancelled': 1,
  'membership.freeze_booked': 1,
  'membership.freeze_cancelled': 1,
  'membership.price_change_scheduled': 1,
  // Not operator-subscribable (the spec leaves it out of the catalogue), recorded all the same.
  'booking.checked_in': 2,
} as const satisfies Record<RecordedEventName, number>;

export type EventName = keyof typeof EVENT_SCHEMA_VERSIONS;

/**
 * The spec's operator-subscribable catalogue: the names a webhook endpoint may list. Events of
 * operations this service does not run yet are accepted here so subscriptions made today keep
 * working when those operations arrive.
 */
export const SUBSCRIBABLE_EVENTS = [
  'booking.created',
  'booking.confirmed',
  'booking.cancelled',
  'booking.reissued',
  'booking.rescheduled',
  'booking.transferred',
  'booking.refunded',
  'refund.created',
  'refund.partial_no_cancel',
  'waiver.signed',
  'gift_card.sold',
  'gift_card.redeemed',
  'shift.opened',
  'shift.closed',
  'booking.party_updated',
  'customer.created',
  'customer.updated',
  'order.created',
  'order.confirmed',
  'order.cancelled',
  'wallet.funded',
  'wallet.spent',
  'wallet.refunded',
  'wallet.funding_returned',
  'wallet.refund_review_required',
  'wallet.expired',
  'wallet.access_changed',
  'membership.activated',
  'membership.imported',
  'membership.expired',
  'membership.benefit_used',
  'membership.guest_pass_used',
  'membership.visits_reserved',
  'membership.discount_used',
  'membership.frozen',
  'membership.unfrozen',
  'membership.holder_changed',
  'membership.holder_photo_captured',
  'membership.subscription_started',
  'membership.payment_succeeded',
  'membership.renewed',
  'membership.payment_failed',
  'membership.past_due',
  'membership.paused_for_payment',
  'membership.ended',
  'membership.plan_change_requested',
  'membership.plan_changed',
  'membership.plan_change_cancelled',
  'membership.freeze_booked',
  'membership.freeze_cancelled',
  'membership.price_change_scheduled',
] as const;

export type SubscribableEvent = (typeof SUBSCRIBABLE_EVENTS)[number];

const subscribable = new Set<string>(SUBSCRIBABLE_EVENTS);

export function isSubscribable(name: string): name is SubscribableEvent {
  return subscribable.has(name);
}

/** Whether an endpoint listening to `events` (empty: all of them) gets `name`. */
export function endpointWants(events: readonly string[], name: string): boolean {
  return isSubscribable(name) && (events.length === 0 || events.includes(name));
}

import { Type, type Static, type TObject, type TProperties } from '@sinclair/typebox';
import { BookingEvents, BookingSecretFields } from './booking';
import { CommonFields, CustomerContactAtDelivery } from './common';
import { MembershipEvents, MembershipSecretFields } from './memberships';
import { MoneyEvents } from './money';
import { OrderEvents } from './orders';
import { PeopleEvents } from './people';
import { WalletEvents } from './wallets';

/**
 * The data fields of every event this service records, by event name: the one map producers are
 * typed by (recordEvent), the webhook docs are generated from and the receiver package narrows
 * with. Free of I/O so receivers can import its types alone.
 */
export const EVENT_FIELDS = {
  ...BookingEvents,
  ...MoneyEvents,
  ...PeopleEvents,
  ...OrderEvents,
  ...WalletEvents,
  ...MembershipEvents,
};

export type RecordedEventName = keyof typeof EVENT_FIELDS;

/** What each event is about: the spec's subjects, plus `shift` for POS register events. */
export type EntityType = 'booking' | 'customer' | 'wallet' | 'membership' | 'order' | 'shift';

/** Money events about a booking's payment or an order's, and member discounts on either. */
const BOOKING_OR_ORDER = ['booking', 'order'] as const;

export const EVENT_ENTITY = {
  'booking.created': 'booking',
  'booking.confirmed': 'booking',
  'booking.cancelled': 'booking',
  'booking.reissued': 'booking',
  'booking.rescheduled': 'booking',
  'booking.transferred': 'booking',
  'booking.party_updated': 'booking',
  'booking.refunded': 'booking',
  'booking.checked_in': 'booking',
  'refund.created': BOOKING_OR_ORDER,
  'refund.partial_no_cancel': 'booking',
  'waiver.signed': 'booking',
  'gift_card.redeemed': BOOKING_OR_ORDER,
  // A sale is an order: no booking, customer or wallet is its subject; its id is the sale's.
  'gift_card.sold': 'order',
  'shift.opened': 'shift',
  'shift.closed': 'shift',
  'customer.created': 'customer',
  'customer.updated': 'customer',
  'order.created': 'order',
  'order.confirmed': 'order',
  'order.cancelled': 'order',
  'wallet.funded': 'wallet',
  'wallet.spent': 'wallet',
  'wallet.refunded': 'wallet',
  'wallet.funding_returned': 'wallet',
  'wallet.refund_review_required': 'wallet',
  'wallet.expired': 'wallet',
  'wallet.access_changed': 'wallet',
  'membership.activated': 'membership',
  'membership.imported': 'membership',
  'membership.expired': 'membership',
  'membership.benefit_used': 'membership',
  'membership.guest_pass_used': 'membership',
  // Reserving visits is about the booking they are reserved for.
  'membership.visits_reserved': 'booking',
  // A member discount is applied to a booking or to a retail order.
  'membership.discount_used': BOOKING_OR_ORDER,
  'membership.frozen': 'membership',
  'membership.unfrozen': 'membership',
  'membership.holder_changed': 'membership',
  'membership.holder_photo_captured': 'membership',
  'membership.subscription_started': 'membership',
  'membership.payment_succeeded': 'membership',
  'membership.renewed': 'membership',
  'membership.payment_failed': 'membership',
  'membership.past_due': 'membership',
  'membership.paused_for_payment': 'membership',
  'membership.ended': 'membership',
  'membership.plan_change_requested': 'membership',
  'membership.plan_changed': 'membership',
  'membership.plan_change_cancelled': 'membership',
  'membership.freeze_booked': 'membership',
  'membership.freeze_cancelled': 'membership',
  'membership.price_change_scheduled': 'membership',
} as const satisfies Record<RecordedEventName, EntityType | readonly EntityType[]>;

/** The entity types event `N` may be about. */
export type EntityOf<N extends RecordedEventName> = Extract<
  (typeof EVENT_ENTITY)[N] extends readonly (infer E)[] ? E : (typeof EVENT_ENTITY)[N],
  EntityType
>;

/** Fields an event carries that are bearer secrets: sealed in the outbox, opened only to send. */
const SECRET_FIELDS = { ...BookingSecretFields, ...MembershipSecretFields };
export const EVENT_SECRET_FIELDS: Partial<Record<RecordedEventName, TObject>> = SECRET_FIELDS;

type SecretsOf<N extends RecordedEventName> = N extends keyof typeof SECRET_FIELDS
  ? Static<(typeof SECRET_FIELDS)[N]>
  : never;

/** What a producer records for event `N` (besides the common fields recordEvent adds). */
export type EventFields<N extends RecordedEventName> = Static<(typeof EVENT_FIELDS)[N]>;

/** The sealed fields a producer passes for event `N`, when it has any. */
export type EventSecretFields<N extends RecordedEventName> = SecretsOf<N>;

type Common = Static<TObject<typeof CommonFields>>;
type Contact = Static<TObject<typeof CustomerContactAtDelivery>>;

/** The `data` of a delivered event `N`, as a receiver gets it. */
export type EventData<N extends RecordedEventName> = Common &
  EventFields<N> &
  ([SecretsOf<N>] extends [never] ? unknown : SecretsOf<N>) &
  (N extends `customer.${string}` ? Contact : unknown);

/** The JSON schema of a delivered event's `data`: common fields, its own, secrets, contact. */
export function deliveredDataSchema(name: RecordedEventName, options: { $id?: string } = {}): TObject {
  const own = EVENT_FIELDS[name] as TObject;
  const properties: TProperties = {
    ...CommonFields,
    ...own.properties,
    ...(EVENT_SECRET_FIELDS[name]?.properties ?? {}),
    ...(name.startsWith('customer.') ? CustomerContactAtDelivery : {}),
  };
  return Type.Object(properties, { ...options });
}

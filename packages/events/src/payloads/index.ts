import { Type, type Static, type TObject, type TProperties } from '@sinclair/typebox';
import { BookingEvents, BookingSecretFields } from './booking';
import { CommonFields, CustomerContactAtDelivery } from './common';
import { MoneyEvents } from './money';
import { OrderEvents } from './orders';
import { PeopleEvents } from './people';
import { WalletEvents } from './wallets';

/**
 * The data fields of every event this service records, by event name: the one map producers are
 * typed by (recordEvent), the webhook docs are generated from and the receiver package narrows
 * with. Free of I/O so receivers can import its types alone.
 */
export const EVENT_FIELDS = { ...BookingEvents, ...MoneyEvents, ...PeopleEvents, ...OrderEvents, ...WalletEvents };

export type RecordedEventName = keyof typeof EVENT_FIELDS;

/** What each event is about: the spec's subjects, plus `shift` for POS register events. */
export type EntityType = 'booking' | 'customer' | 'wallet' | 'membership' | 'order' | 'shift';

/** Money events about a booking's payment or an order's. */
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
} as const satisfies Record<RecordedEventName, EntityType | readonly EntityType[]>;

/** The entity types event `N` may be about. */
export type EntityOf<N extends RecordedEventName> = Extract<
  (typeof EVENT_ENTITY)[N] extends readonly (infer E)[] ? E : (typeof EVENT_ENTITY)[N],
  EntityType
>;

/** Fields an event carries that are bearer secrets: sealed in the outbox, opened only to send. */
export const EVENT_SECRET_FIELDS: Partial<Record<RecordedEventName, TObject>> = BookingSecretFields;

type SecretsOf<N extends RecordedEventName> = N extends keyof typeof BookingSecretFields
  ? Static<(typeof BookingSecretFields)[N]>
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

import { Type } from '@sinclair/typebox';
import { Cents, Currency, Id, Nullable, Timestamp } from './common';

const TenderType = Type.Union([
  Type.Literal('card'),
  Type.Literal('cash'),
  Type.Literal('wallet'),
  Type.Literal('gift_card'),
]);

/** Orders: online purchases paid through the provider, and retail orders at the till. */
export const OrderEvents = {
  'order.created': Type.Object({
    order_id: Id(),
    kind: Type.Union([Type.Literal('wallet_topup'), Type.Literal('membership')], {
      description: 'what the order buys',
    }),
    customer_id: Id('the buyer'),
    amount_cents: Cents('what the buyer is asked to pay'),
    currency: Currency,
    payment_intent_id: Nullable(
      Type.String(),
      'the Stripe PaymentIntent the buyer pays (wallet top-ups, fixed-term memberships); null for a subscription',
    ),
    subscription_id: Nullable(
      Type.String(),
      'the Stripe Subscription whose first invoice the buyer pays (recurring memberships); null otherwise',
    ),
    wallet_id: Nullable(Id(), 'the wallet a wallet_topup funds'),
    membership_id: Nullable(Id(), 'the membership a membership order sells, pending until paid'),
    plan_id: Nullable(Id(), 'the plan a membership order sells'),
    pay_by: Timestamp('when the order is cancelled if still unpaid'),
  }),
  'order.confirmed': Type.Object({
    order_id: Id(),
    customer_id: Nullable(Id(), 'null: an anonymous sale'),
    shift_id: Id('the open shift the order was taken in'),
    venue_id: Nullable(Id(), "the shift's venue; null: the venue-less register"),
    total_cents: Cents(),
    paid_cents: Cents('tenders captured'),
    balance_due_cents: Cents('total - paid: above zero only when confirmed unpaid'),
    currency: Currency,
    confirmed_unpaid: Type.Boolean({
      description: 'a manager confirmed the order without full payment: confirmation does not prove payment',
    }),
    tenders: Type.Array(Type.Object({ tender_id: Id(), type: TenderType, amount_cents: Cents() }), {
      description: 'the captured tenders',
    }),
    actor_user_id: Id(),
  }),
  // The spec's cancelled order carries the order as its entity and nothing else.
  'order.cancelled': Type.Object({}),
};

import { Type } from '@sinclair/typebox';
import { Cents, Currency, DateOnly, Id, Nullable, Timestamp } from './common';

/**
 * What every event about a membership says about it. The owner pays for the membership; the
 * holder is the person who uses it (often the same customer).
 */
export const MembershipRef = {
  membership_id: Id(),
  plan_id: Id('the plan the membership is on'),
  customer_id: Id('the owner: the customer who pays for the membership'),
  holder_customer_id: Id('the holder: the customer who uses the membership'),
};

const Channel = Type.Union([Type.Literal('online'), Type.Literal('pos')], {
  description: 'online: bought online; pos: sold at the till',
});
const Billing = Type.Union([Type.Literal('fixed_term'), Type.Literal('recurring')], {
  description: 'fixed_term: paid once for a set term; recurring: a subscription billed each period',
});
const MembershipStatus = Type.Union(
  [
    Type.Literal('pending_payment'),
    Type.Literal('active'),
    Type.Literal('frozen'),
    Type.Literal('past_due'),
    Type.Literal('paused_for_payment'),
    Type.Literal('expired'),
    Type.Literal('ended'),
    Type.Literal('cancelled'),
  ],
  { description: 'the status the membership was imported with' },
);
const RequestedBy = Type.Union([Type.Literal('member'), Type.Literal('staff')], {
  description: 'member: the member asked for it themselves; staff: a staff user did it for them',
});
const periodKey = Type.String({ description: 'the name of the period the use counted against when recorded' });
const invoiceId = Type.String({ description: 'the Stripe invoice' });
const amountDue = Cents('what the invoice still asks for');

/** Memberships: sale or import, use of their allowances, freezes, holders and recurring billing. */
export const MembershipEvents = {
  'membership.activated': Type.Object({
    ...MembershipRef,
    order_id: Nullable(Id(), 'the order that paid for it; null: none'),
    channel: Channel,
    starts_at: Timestamp(),
    expires_at: Timestamp(),
    amount_cents: Cents('what was paid for it'),
    currency: Currency,
  }),
  'membership.imported': Type.Object({
    ...MembershipRef,
    external_ref: Type.String({ description: "the membership's reference in the system it was imported from" }),
    billing: Billing,
    status: MembershipStatus,
    starts_at: Timestamp(),
    expires_at: Nullable(Timestamp(), 'null: no end date'),
    actor_user_id: Id(),
  }),
  'membership.expired': Type.Object({
    ...MembershipRef,
    expires_at: Timestamp('when it expired'),
  }),
  'membership.benefit_used': Type.Object({
    ...MembershipRef,
    benefit_id: Id(),
    benefit_name: Type.String({ description: "the benefit's name when it was used" }),
    quantity: Type.Integer({ description: 'how many of the benefit were used' }),
    remaining: Nullable(Type.Integer(), 'left of the benefit in this period; null: unlimited'),
    period_key: periodKey,
    order_id: Nullable(Id(), 'the order it was used in; null: none'),
    actor_user_id: Id(),
  }),
  'membership.guest_pass_used': Type.Object({
    ...MembershipRef,
    guest_count: Type.Integer({ description: 'guest passes used' }),
    remaining_guest_passes: Nullable(Type.Integer(), 'guest passes left in this period; null: unlimited'),
    booking_id: Nullable(Id(), 'the booking the guests came with; null: none'),
    period_key: periodKey,
    actor_user_id: Id(),
  }),
  // About the booking the visits are reserved for (entity_type booking).
  'membership.visits_reserved': Type.Object({
    booking_id: Id(),
    membership_id: Id(),
    plan_id: Id(),
    slot_id: Id(),
    visits: Type.Integer({ description: "visits of the membership's allowance reserved for the booking" }),
    guest_passes: Type.Integer({ description: 'guest passes reserved for the booking' }),
    remaining_visits: Nullable(Type.Integer(), 'visits left in this period; null: unlimited'),
    period_key: periodKey,
  }),
  // About the booking or the order the discount was applied to (entity_type booking or order).
  'membership.discount_used': Type.Object({
    membership_id: Id(),
    plan_id: Id(),
    booking_id: Nullable(Id(), 'entity_type booking: the booking discounted; null: an order'),
    order_id: Nullable(Id(), 'entity_type order: the order discounted; null: a booking'),
    discount_percent: Type.Integer({ minimum: 1, maximum: 100, description: "the plan's member discount, 1 to 100" }),
    discount_cents: Cents('the amount taken off'),
    currency: Currency,
  }),
  'membership.frozen': Type.Object({
    ...MembershipRef,
    freeze_id: Id(),
    starts_on: DateOnly('the day the freeze starts, YYYY-MM-DD'),
    ends_on: DateOnly('the day the freeze ends, YYYY-MM-DD'),
    planned_days: Type.Integer({ description: 'the days the freeze was booked for' }),
    fee_cents: Nullable(Cents(), 'the freeze fee, recurring plans only; null: no fee'),
    currency: Currency,
  }),
  'membership.unfrozen': Type.Object({
    ...MembershipRef,
    freeze_id: Id(),
    frozen_days: Type.Integer({ description: 'the days the membership was actually frozen' }),
    previous_expires_at: Timestamp('the expiry before the freeze was added to it'),
    expires_at: Timestamp('the expiry now, moved on by the days frozen'),
  }),
  'membership.holder_changed': Type.Object({
    ...MembershipRef,
    holder_customer_id: Id('the new holder'),
    previous_holder_customer_id: Id(),
    reason: Nullable(Type.String(), 'the reason given, or null'),
    actor_user_id: Id(),
  }),
  'membership.holder_photo_captured': Type.Object({
    ...MembershipRef,
    photo_id: Id('the stored photo; the event carries no image and no link to it'),
    captured_at: Timestamp(),
    actor_user_id: Id(),
  }),
  'membership.subscription_started': Type.Object({
    ...MembershipRef,
    order_id: Id('the order the membership was bought in'),
    subscription_id: Type.String({ description: 'the Stripe subscription' }),
    invoice_id: Type.String({ description: 'the Stripe invoice of the first period' }),
    amount_cents: Cents('what the first invoice charged'),
    currency: Currency,
    period_start: Timestamp(),
    period_end: Timestamp(),
  }),
  'membership.payment_succeeded': Type.Object({
    ...MembershipRef,
    invoice_id: invoiceId,
    billing_reason: Type.Union(
      [Type.Literal('create'), Type.Literal('cycle'), Type.Literal('update'), Type.Literal('freeze_fee')],
      {
        description:
          'create: the first invoice; cycle: a renewal; update: a change of plan or price; freeze_fee: the fee of a freeze',
      },
    ),
    amount_cents: Cents('what was paid'),
    currency: Currency,
    attempt_count: Type.Integer({ description: 'payment attempts made on the invoice' }),
    recovered: Type.Boolean({ description: 'true: paid after earlier attempts failed' }),
  }),
  'membership.renewed': Type.Object({
    ...MembershipRef,
    invoice_id: invoiceId,
    period_start: Timestamp('the start of the period paid for'),
    period_end: Timestamp('the end of the period paid for'),
    amount_cents: Cents(),
    currency: Currency,
  }),
  'membership.payment_failed': Type.Object({
    ...MembershipRef,
    invoice_id: invoiceId,
    amount_due_cents: amountDue,
    currency: Currency,
    attempt_count: Type.Integer({ description: 'payment attempts made on the invoice, this one included' }),
    next_attempt_at: Nullable(Timestamp(), 'when the provider tries again; null: it does not'),
    final: Type.Boolean({ description: 'true: the last attempt; the provider will not retry' }),
    failure_code: Nullable(Type.String(), "the provider's failure code, or null"),
  }),
  'membership.past_due': Type.Object({
    ...MembershipRef,
    invoice_id: invoiceId,
    amount_due_cents: amountDue,
    currency: Currency,
  }),
  'membership.paused_for_payment': Type.Object({
    ...MembershipRef,
    invoice_id: invoiceId,
    amount_due_cents: amountDue,
    currency: Currency,
    attempt_count: Type.Integer({ description: 'payment attempts made on the invoice' }),
    grace_ends_at: Timestamp('the end of the grace period to pay the invoice'),
  }),
  'membership.ended': Type.Object({
    ...MembershipRef,
    reason: Type.Union(
      [
        Type.Literal('cancelled_by_member'),
        Type.Literal('cancelled_by_staff'),
        Type.Literal('payment_failed'),
        Type.Literal('disputed'),
        Type.Literal('provider'),
        Type.Literal('refunded'),
      ],
      {
        description:
          'disputed: the payer disputed a payment with their bank; provider: the provider ended the subscription; refunded: the order that sold a fixed-term membership was refunded (in full, or its membership line)',
      },
    ),
    ended_at: Timestamp(),
    paid_through: Nullable(Timestamp(), 'the end of the last period paid for; null: none'),
    actor_user_id: Nullable(Id(), 'the staff user who cancelled it; null: not a staff action'),
  }),
  'membership.plan_change_requested': Type.Object({
    ...MembershipRef,
    change_id: Id(),
    from_plan_id: Id(),
    to_plan_id: Id(),
    from_price_cents: Cents(),
    to_price_cents: Cents(),
    currency: Currency,
    when: Type.Union([Type.Literal('now'), Type.Literal('period_end')], {
      description: 'now: at once; period_end: at the end of the current billing period',
    }),
    effective_at: Timestamp('when the new plan takes effect'),
    requested_by: RequestedBy,
    actor_user_id: Nullable(Id(), 'the staff user; null: the member asked'),
  }),
  'membership.plan_changed': Type.Object({
    ...MembershipRef,
    plan_id: Id('the new plan, as to_plan_id'),
    change_id: Id(),
    from_plan_id: Id(),
    to_plan_id: Id(),
    invoice_id: Nullable(invoiceId, 'the Stripe invoice for the change; null: none'),
    amount_cents: Cents('what the change charged'),
    effective_at: Timestamp(),
  }),
  'membership.plan_change_cancelled': Type.Object({
    ...MembershipRef,
    change_id: Id(),
    to_plan_id: Id('the plan it would have changed to'),
    reason: Type.Union([Type.Literal('withdrawn'), Type.Literal('payment_failed'), Type.Literal('membership_ended')], {
      description:
        'withdrawn: the member or staff withdrew it; payment_failed: the change could not be paid; membership_ended: the membership ended first',
    }),
    actor_user_id: Nullable(Id(), 'the staff user who withdrew it; null: not a staff action'),
  }),
  'membership.freeze_booked': Type.Object({
    ...MembershipRef,
    freeze_id: Id(),
    starts_on: DateOnly('the day the freeze starts, YYYY-MM-DD'),
    ends_on: DateOnly('the day the freeze ends, YYYY-MM-DD'),
    days: Type.Integer({ description: 'the days booked' }),
    fee_cents: Nullable(Cents(), 'the freeze fee, recurring plans only; null: no fee'),
    currency: Currency,
    requested_by: RequestedBy,
    actor_user_id: Nullable(Id(), 'the staff user; null: the member asked'),
  }),
  'membership.freeze_cancelled': Type.Object({
    ...MembershipRef,
    freeze_id: Id(),
    was: Type.Union([Type.Literal('booked'), Type.Literal('active')], {
      description: 'booked: cancelled before it started; active: ended early',
    }),
    frozen_days: Type.Integer({ description: 'the days the membership was frozen before the cancellation' }),
    reason: Nullable(Type.String(), 'the reason given, or null'),
    actor_user_id: Nullable(Id(), 'the staff user; null: not a staff action'),
  }),
  'membership.price_change_scheduled': Type.Object({
    ...MembershipRef,
    change_id: Id(),
    from_price_cents: Cents(),
    to_price_cents: Cents(),
    currency: Currency,
    interval: Type.Union([Type.Literal('month'), Type.Literal('year')], {
      description: 'the billing period the price is for',
    }),
    effective_at: Timestamp('when the new price first applies'),
    actor_user_id: Nullable(
      Id(),
      'the admin who scheduled the price change, also for a membership that joined the plan after it was scheduled; null: a change scheduled before the admin was recorded',
    ),
  }),
};

/**
 * The provider's page where the member pays the invoice is a bearer link (whoever has it sees the
 * member's billing details and can pay): sealed in the outbox, opened only to send.
 */
const hostedInvoiceUrl = Type.Object({
  hosted_invoice_url: Nullable(Type.String(), "the provider's page where the member can pay the invoice; null: none"),
});

export const MembershipSecretFields = {
  'membership.payment_failed': hostedInvoiceUrl,
  'membership.paused_for_payment': hostedInvoiceUrl,
};

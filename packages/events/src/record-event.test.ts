import type { Tx } from '@booking/db';
import { randomUUID } from 'node:crypto';
import { EVENT_FIELDS, deliveredDataSchema, type EventFields, type RecordedEventName } from './payloads';
import { assertRecordedFields } from './payloads/check-fields';
import { recordEvent } from './record-event';

// Compile-time proof, checked by `pnpm typecheck`: each `@ts-expect-error` below must be an
// error, or the type check fails. The calls never run (the function is only referenced).
const tx = {} as Tx;
const subject = {
  booking_id: 'b',
  experience_id: 'e',
  venue_id: 'v',
  slot_id: 's',
  customer_email: 'guest@example.com',
};
const base = { tenantId: 't', entityType: 'booking' as const, entityId: 'b' };

export function typedProducers() {
  void recordEvent(tx, { ...base, name: 'booking.created', fields: { ...subject, guest_count: 2 } });
  // @ts-expect-error a field the catalogue lists is missing (guest_count)
  void recordEvent(tx, { ...base, name: 'booking.created', fields: { ...subject } });
  // @ts-expect-error a field the catalogue does not list, from a spread
  void recordEvent(tx, { ...base, name: 'booking.created', fields: { ...subject, guest_count: 2, ...{ note: 'x' } } });
  const built = { ...subject, guest_count: 2, notes: 'kept out of events' };
  // @ts-expect-error a field the catalogue does not list, in an object built beforehand
  void recordEvent(tx, { ...base, name: 'booking.created', fields: built });
  // @ts-expect-error a field of the wrong type
  void recordEvent(tx, { ...base, name: 'booking.created', fields: { ...subject, guest_count: '2' } });
  // @ts-expect-error an event that carries a sealed code must be given it (and the key)
  void recordEvent(tx, {
    ...base,
    name: 'booking.reissued',
    fields: { ...subject, new_gift_card_id: 'g', amount_cents: 1, actor_user_id: 'k' },
  });
}

const membershipRef = { membership_id: 'm', plan_id: 'p', customer_id: 'c', holder_customer_id: 'h' };
const frozen: EventFields<'membership.frozen'> = {
  ...membershipRef,
  freeze_id: 'f',
  starts_on: '2026-03-01',
  ends_on: '2026-03-14',
  planned_days: 14,
  fee_cents: null,
  currency: 'EUR',
};
const discount: EventFields<'membership.discount_used'> = {
  membership_id: 'm',
  plan_id: 'p',
  booking_id: null,
  order_id: 'o',
  discount_percent: 10,
  discount_cents: 250,
  currency: 'EUR',
};

export function typedMembershipProducers() {
  const membership = { tenantId: 't', entityType: 'membership' as const, entityId: 'm' };
  void recordEvent(tx, { ...membership, name: 'membership.frozen', fields: frozen });
  // @ts-expect-error a field the catalogue does not list
  void recordEvent(tx, { ...membership, name: 'membership.frozen', fields: { ...frozen, photo_url: 'x' } });
  const ended = { ...membershipRef, ended_at: 'e', paid_through: null, actor_user_id: null };
  void recordEvent(tx, { ...membership, name: 'membership.ended', fields: { ...ended, reason: 'disputed' } });
  // @ts-expect-error a reason the catalogue does not list
  void recordEvent(tx, { ...membership, name: 'membership.ended', fields: { ...ended, reason: 'bored' } });
  void recordEvent(tx, {
    tenantId: 't',
    entityType: 'order',
    entityId: 'o',
    name: 'membership.discount_used',
    fields: discount,
  });
  // @ts-expect-error a member discount is about a booking or an order, not the membership
  void recordEvent(tx, { ...membership, name: 'membership.discount_used', fields: discount });
}

describe('event payloads at run time (tests only)', () => {
  const fields = {
    booking_id: randomUUID(),
    experience_id: randomUUID(),
    venue_id: randomUUID(),
    slot_id: randomUUID(),
    customer_email: 'guest@example.com',
    guest_count: 2,
  };

  it('when a producer records what the catalogue lists, then the check passes', () => {
    expect(typeof typedProducers).toBe('function');
    expect(() => assertRecordedFields('booking.created', 'booking', fields)).not.toThrow();
  });

  it('when a field is missing, extra or malformed, then recording fails naming it', () => {
    const { guest_count: _left, ...missing } = fields;
    expect(() => assertRecordedFields('booking.created', 'booking', missing)).toThrow(/guest_count/);
    expect(() => assertRecordedFields('booking.created', 'booking', { ...fields, notes: 'x' })).toThrow(
      /booking.created/,
    );
    expect(() => assertRecordedFields('booking.created', 'booking', { ...fields, slot_id: 'slot-1' })).toThrow(
      /slot_id/,
    );
  });

  describe('membership events', () => {
    const ref = {
      membership_id: randomUUID(),
      plan_id: randomUUID(),
      customer_id: randomUUID(),
      holder_customer_id: randomUUID(),
    };
    const frozenFields = {
      ...ref,
      freeze_id: randomUUID(),
      starts_on: '2026-03-01',
      ends_on: '2026-03-14',
      planned_days: 14,
      fee_cents: 500,
      currency: 'EUR',
    };

    it('when a producer records what the catalogue lists, then the check passes', () => {
      expect(typeof typedMembershipProducers).toBe('function');
      expect(() => assertRecordedFields('membership.frozen', 'membership', frozenFields)).not.toThrow();
      expect(() =>
        assertRecordedFields('membership.frozen', 'membership', { ...frozenFields, fee_cents: null }),
      ).not.toThrow();
      const reserved = {
        booking_id: randomUUID(),
        membership_id: ref.membership_id,
        plan_id: ref.plan_id,
        slot_id: randomUUID(),
        visits: 1,
        guest_passes: 0,
        remaining_visits: null,
        period_key: '2026-03',
      };
      expect(() => assertRecordedFields('membership.visits_reserved', 'booking', reserved)).not.toThrow();
    });

    it('when a field is extra, missing or malformed, then recording fails naming it', () => {
      expect(() =>
        assertRecordedFields('membership.frozen', 'membership', { ...frozenFields, photo_url: 'https://x' }),
      ).toThrow(/membership.frozen/);
      const { holder_customer_id: _left, ...missing } = frozenFields;
      expect(() => assertRecordedFields('membership.frozen', 'membership', missing)).toThrow(/holder_customer_id/);
      expect(() =>
        assertRecordedFields('membership.frozen', 'membership', { ...frozenFields, starts_on: '2026-03-01T00:00:00Z' }),
      ).toThrow(/starts_on/);
      expect(() =>
        assertRecordedFields('membership.frozen', 'membership', { ...frozenFields, ends_on: '2026-02-30' }),
      ).toThrow(/ends_on/);
      const discountFields = {
        membership_id: ref.membership_id,
        plan_id: ref.plan_id,
        booking_id: randomUUID(),
        order_id: null,
        discount_percent: 10,
        discount_cents: 250,
        currency: 'EUR',
      };
      expect(() => assertRecordedFields('membership.discount_used', 'booking', discountFields)).not.toThrow();
      for (const discount_percent of [0, 101, 12.5]) {
        expect(() =>
          assertRecordedFields('membership.discount_used', 'booking', { ...discountFields, discount_percent }),
        ).toThrow(/discount_percent/);
      }
      const ended = {
        ...ref,
        reason: 'bored',
        ended_at: new Date().toISOString(),
        paid_through: null,
        actor_user_id: null,
      };
      expect(() => assertRecordedFields('membership.ended', 'membership', ended)).toThrow(/reason/);
    });

    it('when any membership event is described, then it carries no contact, card, token or photo field', () => {
      const names = (Object.keys(EVENT_FIELDS) as RecordedEventName[]).filter((name) => name.startsWith('membership.'));
      expect(names).toHaveLength(24);
      for (const name of names) {
        const fields = Object.keys(deliveredDataSchema(name).properties);
        expect(fields).toEqual(expect.arrayContaining(['event_id', 'schema_version', 'entity_type', 'entity_id']));
        expect(
          fields.filter((field) => /email|phone|first_name|last_name|card|token|secret|photo_url|image/.test(field)),
        ).toEqual([]);
      }
    });
  });

  it('when a delivered event is described, then it has the common fields, its sealed ones and, for customers, the contact', () => {
    const reissued = Object.keys(deliveredDataSchema('booking.reissued').properties);
    expect(reissued).toEqual(expect.arrayContaining(['event_id', 'schema_version', 'entity_id', 'new_gift_card_code']));
    const customer = Object.keys(deliveredDataSchema('customer.updated').properties);
    expect(customer).toEqual(expect.arrayContaining(['customer_id', 'changed_fields', 'email', 'phone']));
    expect(Object.keys(deliveredDataSchema('waiver.signed').properties)).not.toContain('email');
  });
});

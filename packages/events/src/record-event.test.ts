import type { Tx } from '@booking/db';
import { randomUUID } from 'node:crypto';
import { deliveredDataSchema } from './payloads';
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

  it('when a delivered event is described, then it has the common fields, its sealed ones and, for customers, the contact', () => {
    const reissued = Object.keys(deliveredDataSchema('booking.reissued').properties);
    expect(reissued).toEqual(expect.arrayContaining(['event_id', 'schema_version', 'entity_id', 'new_gift_card_code']));
    const customer = Object.keys(deliveredDataSchema('customer.updated').properties);
    expect(customer).toEqual(expect.arrayContaining(['customer_id', 'changed_fields', 'email', 'phone']));
    expect(Object.keys(deliveredDataSchema('waiver.signed').properties)).not.toContain('email');
  });
});

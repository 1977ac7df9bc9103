import type { Db } from '@booking/db';

/**
 * The data rules no sequence of requests may break, checked in SQL on one tenant. Each query
 * returns the rows that break its rule, so a healthy tenant gives empty lists.
 */
export async function brokenInvariants(db: Db, tenantId: string): Promise<Record<string, unknown[]>> {
  const [seats, giftCards, refunds, holds, events] = await Promise.all([
    // The slot's count of booked seats is its confirmed bookings' guests, no more, no less.
    db.$queryRaw<unknown[]>`
      SELECT s.id, s.seats_booked,
             COALESCE(SUM(b.guest_count) FILTER (WHERE b.status = 'confirmed'), 0)::int AS confirmed_guests
      FROM slots s LEFT JOIN bookings b ON b.slot_id = s.id
      WHERE s.tenant_id = ${tenantId}::uuid
      GROUP BY s.id
      HAVING s.seats_booked <> COALESCE(SUM(b.guest_count) FILTER (WHERE b.status = 'confirmed'), 0)`,
    db.$queryRaw<unknown[]>`
      SELECT id, balance_cents FROM gift_cards WHERE tenant_id = ${tenantId}::uuid AND balance_cents < 0`,
    db.$queryRaw<unknown[]>`
      SELECT id, amount_cents, refunded_cents FROM payments
      WHERE tenant_id = ${tenantId}::uuid AND refunded_cents > amount_cents`,
    db.$queryRaw<unknown[]>`
      SELECT hold_id, count(*)::int AS bookings FROM bookings
      WHERE tenant_id = ${tenantId}::uuid GROUP BY hold_id HAVING count(*) > 1`,
    // One outbox event per fact: a booking is created once.
    db.$queryRaw<unknown[]>`
      SELECT name, entity_id, count(*)::int AS events FROM events
      WHERE tenant_id = ${tenantId}::uuid AND name = 'booking.created'
      GROUP BY name, entity_id HAVING count(*) > 1`,
  ]);
  return {
    'seats_booked = confirmed guests': seats,
    'gift card balance >= 0': giftCards,
    'refunded_cents <= amount_cents': refunds,
    'one booking per hold': holds,
    'one booking.created per booking': events,
  };
}

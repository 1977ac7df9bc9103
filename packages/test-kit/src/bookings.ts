import type { BookingResponse } from '@booking/api/src/bookings/booking-schemas';
import type { DemoTenant } from '@booking/db';
import request from 'supertest';
import { clientIp, type TestApp } from './app';

// The one booking factory: every test that needs a booking (rather than testing how one is
// made) gets it here, through the API, as a guest would make it.

export type Experience = DemoTenant['experiences'][number];

/** Places a hold through the API and returns its id, failing the test if it is refused. */
export async function placeHold(
  t: TestApp,
  ip: string,
  experience: Experience,
  slotId: string,
  seats: number,
): Promise<string> {
  const res = await request(t.app)
    .post('/api/bookings/hold')
    .set('X-Forwarded-For', ip)
    .send({ slot_id: slotId, experience_id: experience.id, seats });
  if (res.status !== 200) throw new Error(`hold failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.hold_id as string;
}

/** A valid booking request body for a hold, with a guest address unique to the hold. */
export function bookingBody(
  demo: DemoTenant,
  experience: Experience,
  slotId: string,
  holdId: string,
  guestCount: number,
) {
  return {
    hold_id: holdId,
    slot_id: slotId,
    experience_id: experience.id,
    venue_id: demo.venue_id,
    guest_count: guestCount,
    // The random end of the hold id: its start is the slot's tag, shared by the slot's holds.
    customer: { email: `guest-${holdId.slice(-12)}@example.com`, first_name: 'Ada', last_name: 'Lovelace' },
  };
}

export type BookingRequestBody = ReturnType<typeof bookingBody> & Record<string, unknown>;

export interface BookingOptions {
  /** Default: the tenant's first experience (the kayak tour: waiver required, party 1..12). */
  experience?: Experience;
  /** Which of the experience's slots. Default 0. */
  slotIndex?: number;
  /** The slot by id, for tests that hold one already; wins over `slotIndex`. */
  slotId?: string;
  /** Default 2. */
  guests?: number;
  /** Seats to hold, when more than `guests` (the extra ones are released by the booking). */
  seats?: number;
  /** Pays the booking, in part or in full, with this gift card. */
  giftCardCode?: string;
  /** Fields laid over the request body: another customer, notes, add-ons... */
  body?: Record<string, unknown>;
  /** The guest's client address. Default: a fresh `clientIp()`, so no rate-limit budget is shared. */
  ip?: string;
}

/** The API's answer, and what the test chose to get it. */
export type CreatedBooking = BookingResponse & {
  holdId: string;
  slotId: string;
  experience: Experience;
  guests: number;
  ip: string;
  /** The request body as sent. */
  body: BookingRequestBody;
  /** The customer's email as sent. */
  email: string;
};

/** Hold + POST /api/bookings; fails the test unless the answer is 201. */
export async function createBooking(
  t: TestApp,
  tenant: DemoTenant,
  options: BookingOptions = {},
): Promise<CreatedBooking> {
  const experience = options.experience ?? tenant.experiences[0]!;
  const slotId = options.slotId ?? experience.slots[options.slotIndex ?? 0]!.id;
  const guests = options.guests ?? 2;
  const ip = options.ip ?? clientIp();
  const holdId = await placeHold(t, ip, experience, slotId, options.seats ?? guests);
  const body: BookingRequestBody = {
    ...bookingBody(tenant, experience, slotId, holdId, guests),
    ...(options.giftCardCode !== undefined && { gift_card_code: options.giftCardCode }),
    ...options.body,
  };
  const res = await request(t.app).post('/api/bookings').set('X-Forwarded-For', ip).send(body);
  if (res.status !== 201) throw new Error(`booking failed: ${res.status} ${JSON.stringify(res.body)}`);
  return {
    ...(res.body as BookingResponse),
    holdId,
    slotId,
    experience,
    guests,
    ip,
    body,
    email: body.customer.email,
  };
}

/** A booking waiting for its payment: no gift card, so it stays `held` while its hold lives. */
export async function heldBooking(
  t: TestApp,
  tenant: DemoTenant,
  options: Omit<BookingOptions, 'giftCardCode'> = {},
): Promise<CreatedBooking> {
  const booked = await createBooking(t, tenant, options);
  if (booked.status !== 'held') throw new Error(`expected a held booking, got ${booked.status}`);
  return booked;
}

/** A booking paid in full by the seed's big gift card: `confirmed` at once, no card payment. */
export async function confirmedBooking(
  t: TestApp,
  tenant: DemoTenant,
  options: Omit<BookingOptions, 'giftCardCode'> = {},
): Promise<CreatedBooking> {
  const booked = await createBooking(t, tenant, { ...options, giftCardCode: tenant.gift_cards[0]!.code });
  if (booked.status !== 'confirmed') throw new Error(`expected a confirmed booking, got ${booked.status}`);
  return booked;
}

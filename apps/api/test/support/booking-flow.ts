import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import type { TestApp } from './test-app';

type Experience = DemoTenant['experiences'][number];

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

/** A valid booking request body for a hold. */
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
    customer: { email: `guest-${holdId.slice(0, 8)}@example.com`, first_name: 'Ada', last_name: 'Lovelace' },
  };
}

import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import { signToken, type TokenPurpose } from '@booking/signing';
import { bearer, clientIp, createTestApp, seedTenant, type TestApp } from '@booking/test-kit';

// Tokens whose signature is genuine (made here with the app's own secret) but whose claims are
// not of the form their purpose is issued with. Each route must refuse them as 401 invalid_token
// before their subject or tenant reaches a query on a uuid column (which answered 500).

describe('tokens with a genuine signature and malformed claims', () => {
  let t: TestApp;
  let demo: DemoTenant;

  beforeAll(async () => {
    t = createTestApp();
    demo = await seedTenant(t.deps);
  });
  afterAll(() => t.close());

  const tokenFor = (purpose: TokenPurpose, subject: string, tenantId = demo.tenant.id) =>
    signToken(t.deps.config.tokenSigningSecret, purpose, { subject, tenantId, ttlSeconds: 600 });

  const expectInvalidToken = (res: request.Response) =>
    expect({ status: res.status, body: res.body }).toEqual({
      status: 401,
      body: expect.objectContaining({ error: 'invalid_token' }),
    });

  it.each([
    ['a subject that is not a uuid', () => tokenFor('waiver', 'not-a-uuid')],
    ['a customer that is not a uuid', () => tokenFor('waiver', `${randomUUID()}:not-a-uuid`)],
    ['a third part', () => tokenFor('waiver', `${randomUUID()}:${randomUUID()}:${randomUUID()}`)],
    ['a tenant that is not a uuid', () => tokenFor('waiver', randomUUID(), demo.tenant.slug)],
  ])('when a waiver token has %s, then reading and signing the waiver are 401 invalid_token', async (_case, make) => {
    const token = make();

    const read = await request(t.app).get(`/api/waivers/${token}`);
    const sign = await request(t.app)
      .post(`/api/waivers/${token}/sign`)
      .set('X-Forwarded-For', clientIp())
      .send({ signer_name: 'Ada Lovelace', participant_name: 'Ada Lovelace', consent: true, waiver_version: '1' });

    expectInvalidToken(read);
    expectInvalidToken(sign);
  });

  it.each([
    ['a subject that is not a uuid', () => tokenFor('check_in', 'not-a-uuid')],
    ['a tenant that is not a uuid', () => tokenFor('check_in', randomUUID(), demo.tenant.slug)],
  ])('when a check-in token has %s, then check-in by token is 401 invalid_token', async (_case, make) => {
    const res = await request(t.app)
      .post('/api/bookings/check-in-by-token')
      .set('Authorization', bearer(demo.api_keys.staff))
      .send({ token: make() });

    expectInvalidToken(res);
  });

  it('when a manage token names a booking and customer that are not uuids, then a reschedule of that path is 401 invalid_token', async () => {
    const res = await request(t.app)
      .post('/api/bookings/not-a-uuid/reschedule')
      .set('X-Manage-Token', tokenFor('manage', 'not-a-uuid:nor-this'))
      .send({ slot_id: demo.experiences[0]!.slots[1]!.id });

    expectInvalidToken(res);
  });

  it('when a booking token names its booking but a tenant that is not a uuid, then the payment intent is 401 invalid_token', async () => {
    const bookingId = randomUUID();

    const res = await request(t.app)
      .post(`/api/embed/bookings/${bookingId}/payment-intent`)
      .set('X-Forwarded-For', clientIp())
      .set('X-Booking-Token', tokenFor('booking', bookingId, demo.tenant.slug));

    expectInvalidToken(res);
  });
});

import { randomUUID } from 'node:crypto';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import type { DemoTenant } from '@booking/db';
import request from 'supertest';
import { MAX_NESTING_DEPTH } from '../src/http/validation';
import { bearer, clientIp, createBooking, createTestApp, seedTenant, type TestApp } from '@booking/test-kit';

// Input the schemas cannot describe (undecodable paths, bodies nested thousands deep, bodies
// that are not in their Content-Encoding, date-times JavaScript or PostgreSQL cannot hold,
// unpaired surrogates) is a 4xx with a documented code, never a 500.

/** A booking request that passes validation (its hold does not exist, so it ends in 404 hold_not_found). */
const validBooking = () => ({
  hold_id: randomUUID(),
  slot_id: randomUUID(),
  experience_id: randomUUID(),
  venue_id: randomUUID(),
  guest_count: 2,
  customer: { email: 'ada@example.com', first_name: 'Ada' },
});

/** `value` inside `depth` nested arrays. */
const nestedIn = (depth: number, value: string) => `${'['.repeat(depth)}${value}${']'.repeat(depth)}`;

describe('malformed input', () => {
  let t: TestApp;
  let demo: DemoTenant;

  beforeAll(async () => {
    t = createTestApp();
    demo = await seedTenant(t.deps);
  });
  afterAll(() => t.close());

  /** Sends the bytes as they are: superagent would otherwise JSON-encode a Buffer sent as JSON. */
  const postRaw = (path: string, raw: string | Buffer, headers: Record<string, string> = {}) =>
    request(t.app)
      .post(path)
      .set({ 'X-Forwarded-For': clientIp(), 'Content-Type': 'application/json', ...headers })
      .serialize((body: string) => body)
      .send(raw as string);

  describe('path parameters that do not percent-decode', () => {
    it.each([
      ['GET', '/api/waivers/%ZZ'],
      ['POST', '/api/waivers/%E0%A4%A/sign'],
      ['GET', '/api/bookings/%C0%AF'],
      ['POST', '/api/bookings/abc%/cancel'],
      ['GET', '/api/v1/customers/%ED%A0%80'],
      ['POST', '/api/embed/bookings/%ZZ/payment-intent'],
    ])('when %s %s, then it is 400 invalid_path', async (method, path) => {
      const res = await request(t.app)[method === 'GET' ? 'get' : 'post'](path).set('X-Forwarded-For', clientIp());

      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'invalid_path', detail: expect.any(String) });
      // The answer names no internals: not the router's message, not the raw segment.
      expect(res.body.detail).not.toMatch(/Failed to decode|%/);
    });
  });

  describe('nesting', () => {
    it('when a body nests 5,000 arrays deep, then it is 400 invalid_body naming the limit, never a stack overflow', async () => {
      const raw = JSON.stringify({ ...validBooking(), notes: '@' }).replace('"@"', nestedIn(5000, '"x"'));

      const res = await postRaw('/api/bookings', raw);

      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_body');
      expect(res.body.detail).toEqual([
        { field: expect.stringMatching(/^\/notes(\/0)+$/), message: expect.stringContaining(`${MAX_NESTING_DEPTH}`) },
      ]);
    });

    it('when objects nest 5,000 deep under an unknown field, then it is 400 invalid_body too', async () => {
      const raw = `{"extra":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`;
      for (const path of ['/api/bookings/hold', '/api/bookings']) {
        const res = await postRaw(path, raw);
        expect(res.status).toBe(400);
        expect(res.body.error).toBe('invalid_body');
      }
    });

    it(`when a body nests exactly ${MAX_NESTING_DEPTH} deep, then nesting is not the problem: the schema answers`, async () => {
      const atLimit = JSON.stringify({ ...validBooking(), notes: '@' }).replace(
        '"@"',
        nestedIn(MAX_NESTING_DEPTH - 1, '"x"'),
      );
      const overLimit = JSON.stringify({ ...validBooking(), notes: '@' }).replace(
        '"@"',
        nestedIn(MAX_NESTING_DEPTH, '"x"'),
      );

      const at = await postRaw('/api/bookings', atLimit);
      const over = await postRaw('/api/bookings', overLimit);

      expect(at.status).toBe(400);
      expect(at.body.detail).toEqual([{ field: '/notes', message: 'must be string' }]);
      expect(over.status).toBe(400);
      expect(over.body.detail[0].message).toContain(`${MAX_NESTING_DEPTH}`);
    });
  });

  describe('Content-Encoding', () => {
    it.each(['gzip', 'deflate', 'br'])(
      'when the body says %s but is plain JSON, then it is 400 invalid_body',
      async (encoding) => {
        const res = await postRaw('/api/bookings', JSON.stringify(validBooking()), { 'Content-Encoding': encoding });

        expect(res.status).toBe(400);
        expect(res.body).toEqual({ error: 'invalid_body', detail: expect.stringContaining('Content-Encoding') });
      },
    );

    it('when a gzip body is empty, then it is 400 invalid_body', async () => {
      const res = await postRaw('/api/bookings/hold', '', { 'Content-Encoding': 'gzip' });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_body');
    });

    it.each([
      ['gzip', gzipSync],
      ['deflate', deflateSync],
      ['br', brotliCompressSync],
    ])('when the body really is %s, then it is read as usual', async (encoding, compress) => {
      const res = await postRaw('/api/bookings', compress(Buffer.from(JSON.stringify(validBooking()))), {
        'Content-Encoding': encoding,
      });

      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'hold_not_found' });
    });

    it('when the encoding is one we do not read, then it stays 415 unsupported_media_type', async () => {
      const res = await postRaw('/api/bookings', JSON.stringify(validBooking()), { 'Content-Encoding': 'compress' });
      expect(res.status).toBe(415);
      expect(res.body).toEqual({ error: 'unsupported_media_type' });
    });
  });

  describe('date-times', () => {
    let endpointId: string;
    const recover = (since: unknown) =>
      request(t.app)
        .post(`/api/webhooks/endpoints/${endpointId}/recover`)
        .set('Authorization', bearer(demo.api_keys.admin))
        .send({ since });

    beforeAll(async () => {
      const created = await request(t.app)
        .post('/api/webhooks/endpoints')
        .set('Authorization', bearer(demo.api_keys.admin))
        .send({ url: 'https://hooks.example.com/booking' });
      expect(created.status).toBe(201);
      endpointId = created.body.id;
    });

    it.each([
      ['a leap second', '2026-01-01T23:59:60Z'],
      ['year 0000', '0000-01-01T00:00:00Z'],
      ['year 0001 that is year 0000 in UTC', '0001-01-01T00:30:00+01:00'],
      ['a day its month does not have', '2026-02-30T10:00:00Z'],
      ['hour 24', '2026-01-01T24:00:00Z'],
      ['no offset', '2026-01-01T10:00:00'],
      ['an offset without minutes', '2026-01-01T10:00:00+01'],
      ['a year past 9999 in UTC', '9999-12-31T23:30:00-01:00'],
    ])('when since is %s (%s), then it is 400 invalid_body naming since', async (_label, since) => {
      const res = await recover(since);

      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'invalid_body', detail: [{ field: '/since', message: expect.any(String) }] });
    });

    it.each([
      '2026-01-01T10:00:00Z',
      '2026-01-01t10:00:00.123456z',
      '0001-01-01T00:00:00Z',
      '9999-12-31T23:59:59.999Z',
    ])('when since is %s, then it is accepted', async (since) => {
      const res = await recover(since);
      expect(res.status).toBe(202);
      expect(res.body).toEqual({ recovered: 0 });
    });
  });

  describe('unpaired UTF-16 surrogates', () => {
    /** A customer of the demo tenant, made by a booking. */
    async function customerId(): Promise<string> {
      const booked = await createBooking(t, demo, { guests: 1 });
      const booking = await t.deps.db.booking.findUniqueOrThrow({ where: { id: booked.booking_id } });
      return booking.customerId;
    }

    it.each([
      ['a lone high surrogate in notes', '{"notes":"a\\ud800b"}', '/notes'],
      ['a lone low surrogate in first_name', '{"customer":{"first_name":"\\udc00"}}', '/customer/first_name'],
      ['a reversed pair', '{"notes":"\\udc00\\ud800"}', '/notes'],
      ['a lone surrogate in a key', '{"customer":{"\\ud800":"x"}}', '/customer'],
    ])('when a booking has %s, then it is 400 invalid_body naming where', async (_label, change, field) => {
      const body = { ...validBooking(), ...JSON.parse(change) };
      if (body.customer.first_name === undefined) body.customer.first_name = 'Ada';
      if (body.customer.email === undefined) body.customer.email = 'ada@example.com';

      const res = await postRaw('/api/bookings', JSON.stringify(body));

      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_body');
      expect(res.body.detail).toEqual([{ field, message: expect.stringContaining('surrogate') }]);
    });

    it('when a surrogate pair is well formed (an emoji), then it is text like any other', async () => {
      const res = await postRaw('/api/bookings', JSON.stringify({ ...validBooking(), notes: 'kayak \ud83d\udea3' }));
      expect(res.status).toBe(404);
      expect(res.body.error).toBe('hold_not_found');
    });

    it('when customer tags hold a lone surrogate, then it is 400 invalid_body and the customer is unchanged', async () => {
      const id = await customerId();
      const before = await t.deps.db.customer.findUniqueOrThrow({ where: { id } });

      const res = await request(t.app)
        .patch(`/api/customers/${id}`)
        .set('Authorization', bearer(demo.api_keys.manager))
        .set('Content-Type', 'application/json')
        .send('{"tags":["vip","\\ud800"]}');

      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: 'invalid_body',
        detail: [{ field: '/tags/1', message: expect.stringContaining('surrogate') }],
      });
      expect(await t.deps.db.customer.findUniqueOrThrow({ where: { id } })).toEqual(before);
    });

    it('when a query value holds NUL, then it is 400 invalid_query', async () => {
      const res = await request(t.app)
        .get('/api/v1/customers')
        .query({ email: 'a\u0000b' })
        .set('Authorization', bearer(demo.api_keys.staff));
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_query');
    });
  });

  describe('guest_count', () => {
    it.each<[string, Record<string, unknown>]>([
      ['missing', { guest_count: undefined }],
      ['a string', { guest_count: '1' }],
      ['a fraction', { guest_count: 2.5 }],
      ['null', { guest_count: null }],
    ])('when guest_count is %s, then it is 400 invalid_body, not invalid_guest_count', async (_label, change) => {
      const res = await postRaw('/api/bookings', JSON.stringify({ ...validBooking(), ...change }));

      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: 'invalid_body',
        detail: [{ field: '/guest_count', message: expect.any(String) }],
      });
    });

    it.each([0, -1, 201, 1e6])(
      'when guest_count is the integer %p, outside 1..200, then it is 400 invalid_guest_count',
      async (guestCount) => {
        const res = await postRaw('/api/bookings', JSON.stringify({ ...validBooking(), guest_count: guestCount }));

        expect(res.status).toBe(400);
        expect(res.body).toEqual({
          error: 'invalid_guest_count',
          detail: [{ field: '/guest_count', message: expect.any(String) }],
        });
      },
    );
  });

  describe('/readyz when PostgreSQL is unreachable', () => {
    it('then it is 503 service_unavailable saying which dependency is down, without the driver message', async () => {
      const broken = createTestApp({ DATABASE_URL: 'postgresql://secret-user:hunter2@127.0.0.1:5439/private_db' });
      try {
        const res = await request(broken.app).get('/readyz');

        expect(res.status).toBe(503);
        expect(res.body).toEqual({ error: 'service_unavailable', detail: { postgres: 'down', redis: 'ok' } });
        expect(res.text).not.toMatch(/5439|secret-user|hunter2|private_db|ECONNREFUSED|prisma/i);
      } finally {
        await broken.close();
      }
    });
  });
});

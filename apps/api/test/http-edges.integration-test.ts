import { randomUUID } from 'node:crypto';
import request from 'supertest';
import {
  bookingBody,
  clientIp,
  createTestApp,
  kayak,
  placeHold,
  seedTenant,
  sleep,
  type TestApp,
  within,
} from '@booking/test-kit';

interface FieldProblem {
  field: string;
  message: string;
}

/** A booking request that passes validation (its hold does not exist, so it ends in 404 hold_not_found). */
function validBooking(): Record<string, unknown> & { customer: Record<string, unknown> } {
  return {
    hold_id: randomUUID(),
    slot_id: randomUUID(),
    experience_id: randomUUID(),
    venue_id: randomUUID(),
    guest_count: 2,
    customer: { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace', phone: '+1 555 0100' },
    notes: 'window seat',
    addons: [{ addon_id: randomUUID(), qty: 1 }],
  };
}

const validHold = () => ({ slot_id: randomUUID(), experience_id: randomUUID(), seats: 2 });
const addons = (count: number) => Array.from({ length: count }, () => ({ addon_id: randomUUID(), qty: 1 }));

describe('HTTP edges', () => {
  let t: TestApp;

  beforeAll(() => {
    t = createTestApp();
  });
  afterAll(() => t.close());

  const postJson = (path: string, body: unknown) =>
    request(t.app)
      .post(path)
      .set('X-Forwarded-For', clientIp())
      .set('Content-Type', 'application/json')
      .send(JSON.stringify(body));

  describe('routing and body parsing', () => {
    it('when the route is unknown, then it is 404 not_found as JSON', async () => {
      const get = await request(t.app).get('/api/no-such-route');
      const post = await request(t.app).post('/api/bookings/nope').send({});

      expect(get.status).toBe(404);
      expect(get.headers['content-type']).toMatch(/^application\/json/);
      expect(get.body.error).toBe('not_found');
      expect(post.status).toBe(404);
      expect(post.body.error).toBe('not_found');
    });

    it('when the path exists but not for the method, then it is 404 not_found as JSON rather than an HTML page', async () => {
      for (const res of [
        await request(t.app).put('/api/bookings/hold').send({}),
        await request(t.app).delete('/api/widget/experience'),
        // Not the router's automatic text/plain answer listing the methods.
        await request(t.app).options('/api/bookings/hold'),
        await request(t.app).options('/api/payments/stripe/webhook'),
      ]) {
        expect(res.status).toBe(404);
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        expect(res.body.error).toBe('not_found');
      }
    });

    it.each(['/api/bookings/hold', '/api/bookings'])(
      'when %s gets malformed JSON, then it is 400 invalid_body',
      async (path) => {
        const res = await request(t.app)
          .post(path)
          .set('X-Forwarded-For', clientIp())
          .set('Content-Type', 'application/json')
          .send('{"slot_id": "abc", ');

        expect(res.status).toBe(400);
        expect(res.body.error).toBe('invalid_body');
        expect(res.body.detail).toEqual(expect.any(String));
      },
    );

    it('when the body is larger than BODY_LIMIT_BYTES, then it is 413 payload_too_large', async () => {
      const res = await postJson('/api/bookings', { ...validBooking(), notes: 'x'.repeat(70 * 1024) });
      expect(res.status).toBe(413);
      expect(res.body).toEqual({ error: 'payload_too_large' });
    });

    it('when BODY_LIMIT_BYTES is lowered, then the lower limit applies', async () => {
      const small = createTestApp({ BODY_LIMIT_BYTES: '1024' });
      try {
        const body = { ...validBooking(), notes: 'x'.repeat(1500) };
        const tooLarge = await request(small.app).post('/api/bookings').set('X-Forwarded-For', clientIp()).send(body);
        const fits = await request(small.app)
          .post('/api/bookings')
          .set('X-Forwarded-For', clientIp())
          .send(validBooking());

        expect(tooLarge.status).toBe(413);
        expect(tooLarge.body.error).toBe('payload_too_large');
        expect(fits.status).toBe(404);
        expect(fits.body.error).toBe('hold_not_found');
      } finally {
        await small.close();
      }
    });

    it.each(['/api/bookings/hold', '/api/bookings'])(
      'when %s gets text/plain, then the body counts as missing: 400 invalid_body',
      async (path) => {
        const res = await request(t.app)
          .post(path)
          .set('X-Forwarded-For', clientIp())
          .set('Content-Type', 'text/plain')
          .send(JSON.stringify(path === '/api/bookings' ? validBooking() : validHold()));

        expect(res.status).toBe(400);
        expect(res.body.error).toBe('invalid_body');
        expect(res.body.detail).toEqual([expect.objectContaining({ field: '/' })]);
      },
    );

    it('when there is no body at all, then it is 400 invalid_body', async () => {
      const res = await request(t.app).post('/api/bookings/hold').set('X-Forwarded-For', clientIp());
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_body');
    });

    it.each([
      ['/api/bookings/hold', '[]'],
      ['/api/bookings/hold', '"x"'],
      ['/api/bookings/hold', 'null'],
      ['/api/bookings/hold', '42'],
      ['/api/bookings/hold', 'true'],
      ['/api/bookings/hold', '[{"seats": 1}]'],
      ['/api/bookings', '[]'],
      ['/api/bookings', '"x"'],
      ['/api/bookings', 'null'],
      ['/api/bookings', '0'],
    ])('when %s gets the JSON value %s, then it is 400 invalid_body, never 500', async (path, raw) => {
      const res = await request(t.app)
        .post(path)
        .set('X-Forwarded-For', clientIp())
        .set('Content-Type', 'application/json')
        .send(raw);

      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_body');
    });

    it('when a nested value has the wrong JSON type, then it is 400 invalid_body, never 500', async () => {
      for (const customer of [null, [], 'ada@example.com', 7]) {
        const res = await postJson('/api/bookings', { ...validBooking(), customer });
        expect(res.status).toBe(400);
        expect(res.body.error).toBe('invalid_body');
        expect(res.body.detail.map((problem: FieldProblem) => problem.field)).toContain('/customer');
      }
      const addonsAsObject = await postJson('/api/bookings', {
        ...validBooking(),
        addons: { addon_id: randomUUID(), qty: 1 },
      });
      expect(addonsAsObject.status).toBe(400);
      expect(addonsAsObject.body.detail.map((problem: FieldProblem) => problem.field)).toContain('/addons');
    });
  });

  describe('POST /api/bookings/hold field limits', () => {
    it.each<[string, Record<string, unknown>, string]>([
      ['seats 0', { seats: 0 }, '/seats'],
      ['seats 201', { seats: 201 }, '/seats'],
      ['seats 1.5', { seats: 1.5 }, '/seats'],
      ['seats "3"', { seats: '3' }, '/seats'],
      ['seats null', { seats: null }, '/seats'],
      ['slot_id not a uuid', { slot_id: 'slot-1' }, '/slot_id'],
      ['experience_id not a uuid', { experience_id: '123' }, '/experience_id'],
      ['an unknown extra field', { coupon: 'FREE' }, '/coupon'],
    ])('when the hold has %s, then it is 400 invalid_body naming the field', async (_label, change, field) => {
      const res = await postJson('/api/bookings/hold', { ...validHold(), ...change });

      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_body');
      expect(res.body.detail).toEqual([{ field, message: expect.any(String) }]);
    });

    it('when a required field is missing, then the detail names every missing field', async () => {
      const res = await postJson('/api/bookings/hold', { seats: 2 });

      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_body');
      expect(res.body.detail.map((problem: FieldProblem) => problem.field).sort()).toEqual([
        '/experience_id',
        '/slot_id',
      ]);
    });

    it('when seats is at the limits 1 and 200, then validation accepts it (and the unknown slot is 404)', async () => {
      for (const seats of [1, 200]) {
        const res = await postJson('/api/bookings/hold', { ...validHold(), seats });
        expect(res.status).toBe(404);
        expect(res.body.error).toBe('slot_not_found');
      }
    });

    it("when seats is within 1..200 but outside the experience's party size, then it is 400 invalid_guest_count", async () => {
      const demo = await seedTenant(t.deps);
      const { experience, slot } = kayak(demo); // party 1..12

      const res = await postJson('/api/bookings/hold', { slot_id: slot.id, experience_id: experience.id, seats: 13 });

      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_guest_count');
      expect(res.body.detail).toEqual({ min_party_size: 1, max_party_size: 12 });
    });
  });

  describe('POST /api/bookings field limits', () => {
    type Change = (body: ReturnType<typeof validBooking>) => void;

    it('when the request is valid but the hold is unknown, then it is 404 hold_not_found (the baseline of the cases below)', async () => {
      const res = await postJson('/api/bookings', validBooking());
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'hold_not_found' });
    });

    it.each<[string, Change, string]>([
      ['notes of 2001 characters', (b) => (b.notes = 'n'.repeat(2001)), '/notes'],
      ['a gift_card_code of 3 characters', (b) => (b.gift_card_code = 'ABC'), '/gift_card_code'],
      ['a gift_card_code of 33 characters', (b) => (b.gift_card_code = 'G'.repeat(33)), '/gift_card_code'],
      ['21 addons', (b) => (b.addons = addons(21)), '/addons'],
      ['an addon qty of 0', (b) => (b.addons = [{ addon_id: randomUUID(), qty: 0 }]), '/addons/0/qty'],
      ['an addon qty of 51', (b) => (b.addons = [{ addon_id: randomUUID(), qty: 51 }]), '/addons/0/qty'],
      ['an addon qty of 1.5', (b) => (b.addons = [{ addon_id: randomUUID(), qty: 1.5 }]), '/addons/0/qty'],
      ['an addon_id that is not a uuid', (b) => (b.addons = [{ addon_id: 'dry-bag', qty: 1 }]), '/addons/0/addon_id'],
      ['an addon without qty', (b) => (b.addons = [{ addon_id: randomUUID() }]), '/addons/0/qty'],
      ['a first_name of 101 characters', (b) => (b.customer.first_name = 'F'.repeat(101)), '/customer/first_name'],
      ['an empty first_name', (b) => (b.customer.first_name = ''), '/customer/first_name'],
      ['a last_name of 101 characters', (b) => (b.customer.last_name = 'L'.repeat(101)), '/customer/last_name'],
      ['a phone of 41 characters', (b) => (b.customer.phone = '1'.repeat(41)), '/customer/phone'],
      ['a bad email', (b) => (b.customer.email = 'not-an-email'), '/customer/email'],
      ['no email', (b) => delete b.customer.email, '/customer/email'],
      ['a hold_id that is not a uuid', (b) => (b.hold_id = 'hold-123'), '/hold_id'],
      ['a venue_id that is not a uuid', (b) => (b.venue_id = 'harbourside'), '/venue_id'],
      ['no slot_id', (b) => delete b.slot_id, '/slot_id'],
      ['an unknown extra field', (b) => (b.discount_code = 'HALF'), '/discount_code'],
      ['an unknown customer field', (b) => (b.customer.age = 33), '/customer/age'],
    ])('when the booking has %s, then it is 400 invalid_body naming the field', async (_label, change, field) => {
      const body = validBooking();
      change(body);

      const res = await postJson('/api/bookings', body);

      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_body');
      expect(res.body.detail).toEqual([{ field, message: expect.any(String) }]);
    });

    it.each([0, 201, -1])(
      'when guest_count is %p, then it is 400 invalid_guest_count naming guest_count',
      async (guestCount) => {
        const res = await postJson('/api/bookings', { ...validBooking(), guest_count: guestCount });

        expect(res.status).toBe(400);
        expect(res.body.error).toBe('invalid_guest_count');
        expect(res.body.detail).toEqual([{ field: '/guest_count', message: expect.any(String) }]);
      },
    );

    it('when guest_count and another field are both wrong, then it is invalid_body listing both', async () => {
      const body = { ...validBooking(), guest_count: 0, notes: 'n'.repeat(2001) };

      const res = await postJson('/api/bookings', body);

      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_body');
      expect(res.body.detail.map((problem: FieldProblem) => problem.field).sort()).toEqual(['/guest_count', '/notes']);
    });

    it.each<[string, Change]>([
      ['notes of exactly 2000 characters', (b) => (b.notes = 'n'.repeat(2000))],
      ['a gift_card_code of 4 characters', (b) => (b.gift_card_code = 'ABCD')],
      ['a gift_card_code of 32 characters', (b) => (b.gift_card_code = 'G'.repeat(32))],
      ['20 addons', (b) => (b.addons = addons(20))],
      ['addon qty 50', (b) => (b.addons = [{ addon_id: randomUUID(), qty: 50 }])],
      ['a first_name of 100 characters', (b) => (b.customer.first_name = 'F'.repeat(100))],
      ['a phone of 40 characters', (b) => (b.customer.phone = '1'.repeat(40))],
      ['guest_count 200', (b) => (b.guest_count = 200)],
      ['guest_count 1', (b) => (b.guest_count = 1)],
      [
        'only the required fields',
        (b) => (delete b.notes, delete b.addons, delete b.customer.last_name, delete b.customer.phone),
      ],
    ])('when the booking has %s, then validation accepts it', async (_label, change) => {
      const body = validBooking();
      change(body);

      const res = await postJson('/api/bookings', body);

      expect(res.status).toBe(404);
      expect(res.body.error).toBe('hold_not_found');
    });
  });

  describe('health', () => {
    it('when the process is up, then GET /healthz is 200', async () => {
      const res = await request(t.app).get('/healthz');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'ok' });
    });

    it('when PostgreSQL and Redis are reachable, then GET /readyz is 200 with every check ok', async () => {
      const res = await request(t.app).get('/readyz');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'ready', checks: { postgres: 'ok', redis: 'ok' } });
    });

    it('when Redis is unreachable, then GET /readyz is 503 service_unavailable within the check timeout', async () => {
      const broken = createTestApp({ REDIS_URL: 'redis://127.0.0.1:6390' });
      try {
        const started = Date.now();
        const res = await within(
          request(broken.app)
            .get('/readyz')
            .then((r) => r),
          5000,
          'GET /readyz',
        );
        const elapsed = Date.now() - started;

        expect(res.status).toBe(503);
        expect(res.body.error).toBe('service_unavailable');
        expect(res.body.detail.postgres).toBe('ok');
        expect(res.body.detail.redis).not.toBe('ok');
        expect(res.body.detail.redis).toEqual(expect.any(String));
        expect(elapsed).toBeLessThan(3000);
      } finally {
        // quit() waits for a connection that never comes; drop it instead. ioredis then keeps a
        // 2 s timer for the dead socket (its disconnectTimeout); let it run out here so Jest exits cleanly.
        broken.deps.redis.disconnect();
        await within(broken.close(), 3000, 'closing the app').catch(() => undefined);
        await sleep(2100);
      }
    });
  });

  describe('OpenAPI and docs', () => {
    it('when GET /api/openapi.json, then it is OpenAPI 3.1.0 describing the public routes with resolvable $refs', async () => {
      const res = await request(t.app).get('/api/openapi.json');

      expect(res.status).toBe(200);
      const doc = res.body;
      expect(doc.openapi).toBe('3.1.0');
      expect(doc.info.version).toBe('1.0.0');
      expect(doc.paths['/api/widget/experience'].get).toBeDefined();
      expect(doc.paths['/api/bookings/hold'].post).toBeDefined();
      expect(doc.paths['/api/bookings'].post).toBeDefined();
      expect(Object.keys(doc.paths['/api/bookings/hold'].post.responses)).toEqual(
        expect.arrayContaining(['200', '409', '429']),
      );
      expect(Object.keys(doc.paths['/api/bookings'].post.responses)).toEqual(
        expect.arrayContaining(['201', '400', '404', '409', '410', '429']),
      );

      const refs: string[] = [];
      const walk = (node: unknown, depth: number): void => {
        if (depth > 50 || node === null || typeof node !== 'object') return;
        for (const [key, value] of Object.entries(node)) {
          if (key === '$ref') refs.push(String(value));
          else walk(value, depth + 1);
        }
      };
      walk(doc, 0);
      expect(refs.length).toBeGreaterThan(5);
      for (const ref of new Set(refs)) {
        expect(ref).toMatch(/^#\/components\/(schemas|headers)\/[\w.-]+$/);
        const [, , section, name] = ref.split('/');
        expect(doc.components[section!][name!]).toEqual(expect.any(Object));
      }
      for (const name of [
        'HoldRequest',
        'HoldResponse',
        'BookingRequest',
        'BookingResponse',
        'Error',
        'Experience',
        'Slot',
      ]) {
        expect(doc.components.schemas[name]).toEqual(expect.objectContaining({ type: 'object' }));
      }
      // The published request schemas carry the spec's limits.
      expect(doc.components.schemas.HoldRequest.properties.seats).toMatchObject({ minimum: 1, maximum: 200 });
      expect(doc.components.schemas.BookingRequest.properties.notes).toMatchObject({ maxLength: 2000 });
    });

    it('when GET /api/docs/, then it is the Swagger UI HTML page', async () => {
      const res = await request(t.app).get('/api/docs/');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.text).toMatch(/swagger-ui/i);
    });
  });

  describe('X-Request-Id', () => {
    it('when the caller sends a sane X-Request-Id, then it is echoed back', async () => {
      const res = await request(t.app).get('/healthz').set('X-Request-Id', 'trace-abc.123_x');
      expect(res.headers['x-request-id']).toBe('trace-abc.123_x');
    });

    it('when the caller sends none, then a fresh id is generated per request', async () => {
      const first = await request(t.app).get('/healthz');
      const second = await request(t.app).get('/api/no-such-route');
      expect(first.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(second.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(second.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
    });

    it('when the given X-Request-Id is not sane, then it is replaced by a generated one', async () => {
      for (const given of ['has spaces in it', 'x'.repeat(129), 'semi;colon']) {
        const res = await request(t.app).get('/healthz').set('X-Request-Id', given);
        expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      }
    });
  });

  it('when a string carries a NUL character, then it is 400, never a database error', async () => {
    const demo = await seedTenant(t.deps);
    const { experience, slot } = kayak(demo);
    const ip = clientIp();
    const holdId = await placeHold(t, ip, experience, slot.id, 1);
    const valid = bookingBody(demo, experience, slot.id, holdId, 1);
    const body = await request(t.app)
      .post('/api/bookings')
      .set('X-Forwarded-For', ip)
      .send({ ...valid, notes: 'a\u0000b' });
    const query = await request(t.app).get('/api/widget/experience').query({ tenant: 'a\u0000', experience: 'b' });

    expect(body.status).toBe(400);
    expect(body.body.error).toBe('invalid_body');
    expect(query.status).toBe(400);
    expect(query.body.error).toBe('invalid_query');
  });
});

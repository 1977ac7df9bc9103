import { randomUUID } from 'node:crypto';
import { AppError } from '@booking/domain';
import express, { type Response } from 'express';
import pino from 'pino';
import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import {
  bookingBody,
  clientIp,
  createTestApp,
  kayak,
  placeHold,
  seedTenant,
  sleep,
  type TestApp,
  waitUntil,
  within,
} from '@booking/test-kit';
import { holdKeys } from '../src/holds/hold-store';
import { errorHandler } from '../src/http/error-handler';
import { idempotencyFor } from '../src/http/idempotency';
import { requestDeadline } from '../src/http/request-deadline';
import { requestLogger } from '../src/http/request-logger';

type Experience = DemoTenant['experiences'][number];

describe('Idempotency-Key on POST /api/bookings/hold and POST /api/bookings', () => {
  let t: TestApp;

  beforeAll(() => {
    t = createTestApp();
  });
  afterAll(() => t.close());

  function postHold(app: TestApp, ip: string, body: object, key?: string) {
    const req = request(app.app).post('/api/bookings/hold').set('X-Forwarded-For', ip);
    return (key === undefined ? req : req.set('Idempotency-Key', key)).send(body);
  }

  function postBooking(app: TestApp, ip: string, body: object, key?: string) {
    const req = request(app.app).post('/api/bookings').set('X-Forwarded-For', ip);
    return (key === undefined ? req : req.set('Idempotency-Key', key)).send(body);
  }

  /** seats_remaining of a slot as the public widget reports it. */
  async function seatsRemaining(
    app: TestApp,
    demo: DemoTenant,
    experience: Experience,
    slotId: string,
  ): Promise<number> {
    const res = await request(app.app)
      .get('/api/widget/experience')
      .query({ tenant: demo.tenant.slug, experience: experience.slug })
      .expect(200);
    const slot = (res.body.slots as { id: string; seats_remaining: number }[]).find((s) => s.id === slotId);
    if (!slot) throw new Error(`slot ${slotId} is not listed`);
    return slot.seats_remaining;
  }

  /** Waits (bounded) until `count` backends of `app`'s database are blocked on a lock in a query containing `fragment`. */
  async function waitForBlockedQuery(app: TestApp, fragment: string, count = 1): Promise<void> {
    await waitUntil(
      async () => {
        const [row] = await app.deps.db.$queryRaw<{ n: number }[]>`
          SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE ${`%${fragment}%`}`;
        return row!.n >= count;
      },
      { timeoutMs: 5000, intervalMs: 25, what: `${count} queries blocked on "${fragment}"` },
    );
  }

  /**
   * Locks a slot row FOR UPDATE in a transaction of its own until `release` is called (or 15 s
   * pass), so a hold or booking on that slot stays in flight for as long as the test needs.
   * Resolves once the lock is taken.
   */
  async function lockSlot(slotId: string): Promise<{ release: () => void; done: Promise<unknown> }> {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let markLocked!: () => void;
    const locked = new Promise<void>((resolve) => (markLocked = resolve));
    const done = t.deps.db.$transaction(
      async (tx) => {
        await tx.$queryRaw`SELECT id FROM slots WHERE id = ${slotId}::uuid FOR UPDATE`;
        markLocked();
        // Bounded: the lock goes away by itself if the test fails before releasing it.
        await within(released, 15_000, 'release').catch(() => undefined);
      },
      { timeout: 20_000 },
    );
    await within(Promise.race([locked, done]), 5000, 'locking the slot');
    return { release, done };
  }

  describe('POST /api/bookings/hold', () => {
    let demo: DemoTenant;
    beforeEach(async () => {
      demo = await seedTenant(t.deps);
    });

    it('when the same key and body are sent twice, then the second replays the first and the seats are held once', async () => {
      const { experience, slot } = kayak(demo);
      const ip = clientIp();
      const key = randomUUID();
      const body = { slot_id: slot.id, experience_id: experience.id, seats: 3 };

      const first = await postHold(t, ip, body, key);
      const second = await postHold(t, ip, body, key);

      expect(first.status).toBe(200);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      expect(second.status).toBe(200);
      expect(second.headers['idempotent-replayed']).toBe('true');
      expect(second.body).toEqual(first.body);
      expect(first.body).toEqual({ hold_id: expect.any(String), expires_at: expect.any(String) });
      expect(await seatsRemaining(t, demo, experience, slot.id)).toBe(24 - 3);
    });

    it('when the same key comes with a different body, then it is 422 idempotency_key_reused and nothing more is held', async () => {
      const { experience, slot } = kayak(demo);
      const ip = clientIp();
      const key = randomUUID();

      await postHold(t, ip, { slot_id: slot.id, experience_id: experience.id, seats: 2 }, key).expect(200);
      const res = await postHold(t, ip, { slot_id: slot.id, experience_id: experience.id, seats: 5 }, key);

      expect(res.status).toBe(422);
      expect(res.body.error).toBe('idempotency_key_reused');
      expect(res.headers['idempotent-replayed']).toBeUndefined();
      expect(await seatsRemaining(t, demo, experience, slot.id)).toBe(24 - 2);
    });

    it('when a retry arrives while the first request is still running, then it gets the hold the first places, and the seats are held once', async () => {
      const { experience, slot } = kayak(demo);
      const ip = clientIp();
      const key = randomUUID();
      const body = { slot_id: slot.id, experience_id: experience.id, seats: 2 };
      const lock = await lockSlot(slot.id);

      let first: Promise<request.Response> | undefined;
      let retry: Promise<request.Response> | undefined;
      try {
        // The first request claims the key, then waits to read the slot row we hold locked (a slot
        // Redis has no mirror of yet is read FOR SHARE); the retry runs the route too, and waits
        // there as well.
        first = postHold(t, ip, body, key).then((res) => res);
        await waitForBlockedQuery(t, 'FOR SHARE', 1);
        retry = postHold(t, ip, body, key).then((res) => res);
        await waitForBlockedQuery(t, 'FOR SHARE', 2);
      } finally {
        lock.release();
      }
      await lock.done;

      const answers = await Promise.all([first!, retry!]);
      expect(answers.map((res) => res.status)).toEqual([200, 200]);
      expect(answers[1]!.body).toEqual(answers[0]!.body);
      // One of them placed the hold, the other found it.
      expect(answers.map((res) => res.headers['idempotent-replayed']).sort()).toEqual(['true', undefined]);
      expect(await seatsRemaining(t, demo, experience, slot.id)).toBe(24 - 2);
    });

    it('when the hold was released (as confirming or cancelling its booking does) and the request is retried, then the retry gets the first answer and no second hold', async () => {
      const { experience, slot } = kayak(demo);
      const ip = clientIp();
      const key = randomUUID();
      const body = { slot_id: slot.id, experience_id: experience.id, seats: 3 };
      const first = await postHold(t, ip, body, key);
      expect(first.status).toBe(200);
      await t.deps.holds.release(slot.id, first.body.hold_id as string, 3);
      expect(await seatsRemaining(t, demo, experience, slot.id)).toBe(24);

      const retry = await postHold(t, ip, body, key);

      expect([retry.status, retry.headers['idempotent-replayed'], retry.body]).toEqual([200, 'true', first.body]);
      expect(await seatsRemaining(t, demo, experience, slot.id)).toBe(24);
      // Nor can a booking use the released hold.
      expect((await t.deps.holds.read(first.body.hold_id as string)).hold).toBeNull();
    });

    it('when several requests with one key race, then exactly one does the work and the rest conflict or replay it', async () => {
      const { experience, slot } = kayak(demo);
      const ip = clientIp();
      const key = randomUUID();
      const body = { slot_id: slot.id, experience_id: experience.id, seats: 4 };

      const responses = await Promise.all(Array.from({ length: 6 }, () => postHold(t, ip, body, key)));

      const original = responses.filter(
        (res) => res.status === 200 && res.headers['idempotent-replayed'] === undefined,
      );
      expect(original).toHaveLength(1);
      for (const res of responses) {
        if (res === original[0]) continue;
        if (res.status === 409) {
          expect(res.body).toEqual({ error: 'idempotency_request_in_progress' });
        } else {
          expect(res.status).toBe(200);
          expect(res.headers['idempotent-replayed']).toBe('true');
          expect(res.body).toEqual(original[0]!.body);
        }
      }
      expect(await seatsRemaining(t, demo, experience, slot.id)).toBe(24 - 4);
    });

    it.each([
      ['256 characters long', 'k'.repeat(256)],
      ['empty', ''],
      ['made of non-visible characters', 'has space'],
    ])('when the key is %s, then it is 400 invalid_idempotency_key and nothing is held', async (_label, key) => {
      const { experience, slot } = kayak(demo);

      const res = await postHold(t, clientIp(), { slot_id: slot.id, experience_id: experience.id, seats: 1 }, key);

      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_idempotency_key');
      expect(await seatsRemaining(t, demo, experience, slot.id)).toBe(24);
    });

    it('when the key is exactly 255 characters, then it is accepted and replays', async () => {
      const { experience, slot } = kayak(demo);
      const ip = clientIp();
      const key = `${randomUUID()}${'k'.repeat(255)}`.slice(0, 255);
      const body = { slot_id: slot.id, experience_id: experience.id, seats: 1 };

      const first = await postHold(t, ip, body, key);
      const second = await postHold(t, ip, body, key);

      expect(first.status).toBe(200);
      expect(second.headers['idempotent-replayed']).toBe('true');
      expect(second.body).toEqual(first.body);
    });

    it('when there is no Idempotency-Key, then two identical requests place two holds', async () => {
      const { experience, slot } = kayak(demo);
      const ip = clientIp();
      const body = { slot_id: slot.id, experience_id: experience.id, seats: 2 };

      const first = await postHold(t, ip, body);
      const second = await postHold(t, ip, body);

      expect(first.status).toBe(200);
      expect(second.status).toBe(200);
      expect(second.headers['idempotent-replayed']).toBeUndefined();
      expect(second.body.hold_id).not.toBe(first.body.hold_id);
      expect(await seatsRemaining(t, demo, experience, slot.id)).toBe(24 - 4);
    });

    it('when two clients (IPs) use the same key, then each gets its own hold', async () => {
      const { experience, slot } = kayak(demo);
      const key = randomUUID();
      const body = { slot_id: slot.id, experience_id: experience.id, seats: 2 };

      const fromA = await postHold(t, clientIp(), body, key);
      const fromB = await postHold(t, clientIp(), body, key);

      expect(fromA.status).toBe(200);
      expect(fromB.status).toBe(200);
      expect(fromB.headers['idempotent-replayed']).toBeUndefined();
      expect(fromB.body.hold_id).not.toBe(fromA.body.hold_id);
      expect(await seatsRemaining(t, demo, experience, slot.id)).toBe(24 - 4);
    });

    it('when the first answer was a 4xx, then a retry replays it even though it would now succeed', async () => {
      const { experience, slot } = kayak(demo);
      const ip = clientIp();
      const key = randomUUID();
      const body = { slot_id: slot.id, experience_id: experience.id, seats: 1 };
      await placeHold(t, ip, experience, slot.id, 12);
      await placeHold(t, ip, experience, slot.id, 12);

      const refused = await postHold(t, ip, body, key);
      expect(refused.status).toBe(409);
      expect(refused.body.error).toBe('insufficient_capacity');

      // Free the slot: a fresh request would now be served.
      const keys = holdKeys(false);
      await t.deps.redis.del(keys.slot(slot.id).set, keys.slot(slot.id).total);
      const retry = await postHold(t, ip, body, key);
      expect(retry.status).toBe(409);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(retry.body).toEqual(refused.body);
      await postHold(t, ip, body).expect(200);
    });
  });

  describe('POST /api/bookings', () => {
    let demo: DemoTenant;
    beforeEach(async () => {
      demo = await seedTenant(t.deps);
    });

    it('when the same key and body are sent twice, then the second replays the 201 and one booking exists', async () => {
      const { experience, slot } = kayak(demo);
      const ip = clientIp();
      const holdId = await placeHold(t, ip, experience, slot.id, 2);
      const body = bookingBody(demo, experience, slot.id, holdId, 2);
      const key = randomUUID();

      const first = await postBooking(t, ip, body, key);
      const second = await postBooking(t, ip, body, key);

      expect(first.status).toBe(201);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      expect(second.status).toBe(201);
      expect(second.headers['idempotent-replayed']).toBe('true');
      expect(second.body).toEqual(first.body);
      expect(await t.deps.db.booking.count({ where: { holdId } })).toBe(1);
      expect(await t.deps.db.booking.count({ where: { tenantId: demo.tenant.id } })).toBe(1);
      expect(await seatsRemaining(t, demo, experience, slot.id)).toBe(24 - 2);
    });

    it('when the same key comes with a different body, then it is 422 idempotency_key_reused', async () => {
      const { experience, slot } = kayak(demo);
      const ip = clientIp();
      const holdId = await placeHold(t, ip, experience, slot.id, 3);
      const key = randomUUID();

      await postBooking(t, ip, bookingBody(demo, experience, slot.id, holdId, 3), key).expect(201);
      const res = await postBooking(t, ip, bookingBody(demo, experience, slot.id, holdId, 2), key);

      expect(res.status).toBe(422);
      expect(res.body.error).toBe('idempotency_key_reused');
      expect(await t.deps.db.booking.count({ where: { holdId } })).toBe(1);
      expect(await seatsRemaining(t, demo, experience, slot.id)).toBe(24 - 3);
    });

    it('when a retry arrives while the first booking is still being created, then it is 409 idempotency_request_in_progress', async () => {
      const { experience, slot } = kayak(demo);
      const ip = clientIp();
      const holdId = await placeHold(t, ip, experience, slot.id, 2);
      const body = bookingBody(demo, experience, slot.id, holdId, 2);
      const key = randomUUID();
      const lock = await lockSlot(slot.id);

      let first: Promise<request.Response> | undefined;
      try {
        first = postBooking(t, ip, body, key).then((res) => res);
        await waitForBlockedQuery(t, 'FOR NO KEY UPDATE');

        const retry = await postBooking(t, ip, body, key);
        expect(retry.status).toBe(409);
        expect(retry.body.error).toBe('idempotency_request_in_progress');
      } finally {
        lock.release();
      }
      await lock.done;

      const firstRes = await first!;
      expect(firstRes.status).toBe(201);
      const later = await postBooking(t, ip, body, key);
      expect(later.headers['idempotent-replayed']).toBe('true');
      expect(later.body).toEqual(firstRes.body);
      expect(await t.deps.db.booking.count({ where: { holdId } })).toBe(1);
    });

    it('when several bookings with one key race, then exactly one booking is created and the rest conflict or replay', async () => {
      const { experience, slot } = kayak(demo);
      const ip = clientIp();
      const holdId = await placeHold(t, ip, experience, slot.id, 2);
      const body = bookingBody(demo, experience, slot.id, holdId, 2);
      const key = randomUUID();

      // Five is the per-IP booking budget.
      const responses = await Promise.all(Array.from({ length: 5 }, () => postBooking(t, ip, body, key)));

      const original = responses.filter(
        (res) => res.status === 201 && res.headers['idempotent-replayed'] === undefined,
      );
      expect(original).toHaveLength(1);
      for (const res of responses) {
        if (res === original[0]) continue;
        if (res.status === 409) {
          expect(res.body).toEqual({ error: 'idempotency_request_in_progress' });
        } else {
          expect(res.status).toBe(201);
          expect(res.headers['idempotent-replayed']).toBe('true');
          expect(res.body).toEqual(original[0]!.body);
        }
      }
      expect(await t.deps.db.booking.count({ where: { holdId } })).toBe(1);
      expect(await seatsRemaining(t, demo, experience, slot.id)).toBe(24 - 2);
    });

    it('when the same key is used on the hold and the booking route, then each route keeps its own record', async () => {
      const { experience, slot } = kayak(demo);
      const ip = clientIp();
      const key = randomUUID();

      const hold = await postHold(t, ip, { slot_id: slot.id, experience_id: experience.id, seats: 2 }, key);
      expect(hold.status).toBe(200);
      const booking = await postBooking(t, ip, bookingBody(demo, experience, slot.id, hold.body.hold_id, 2), key);

      expect(booking.status).toBe(201);
      expect(booking.headers['idempotent-replayed']).toBeUndefined();
      expect(booking.body.booking_id).toEqual(expect.any(String));
      expect(await t.deps.db.booking.count({ where: { holdId: hold.body.hold_id } })).toBe(1);
    });

    it('when the first answer was 404 hold_not_found, then a retry replays the 404', async () => {
      const { experience, slot } = kayak(demo);
      const ip = clientIp();
      const key = randomUUID();
      const body = bookingBody(demo, experience, slot.id, randomUUID(), 1);

      const first = await postBooking(t, ip, body, key);
      const retry = await postBooking(t, ip, body, key);

      expect(first.status).toBe(404);
      expect(first.body).toEqual({ error: 'hold_not_found' });
      expect(retry.status).toBe(404);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(retry.body).toEqual(first.body);
    });
  });

  describe('record lifetime', () => {
    let short: TestApp;
    beforeAll(() => {
      short = createTestApp({ IDEMPOTENCY_TTL_SECONDS: '1' });
    });
    afterAll(() => short.close());

    it('when IDEMPOTENCY_TTL_SECONDS has passed, then the same request still finds its own hold, never a second one', async () => {
      const demo = await seedTenant(short.deps);
      const { experience, slot } = kayak(demo);
      const ip = clientIp();
      const key = randomUUID();
      const body = { slot_id: slot.id, experience_id: experience.id, seats: 1 };

      const first = await postHold(short, ip, body, key);
      const replay = await postHold(short, ip, body, key);
      expect(first.status).toBe(200);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toEqual(first.body);

      // IDEMPOTENCY_TTL_SECONDS=1 runs out on Redis's clock: a TTL, so time must pass.
      await sleep(1200);
      const afterExpiry = await postHold(short, ip, body, key);
      const otherKey = await postHold(short, ip, body, randomUUID());

      // The hold id derives from the key: a retry never places a second hold for one request.
      expect(afterExpiry.status).toBe(200);
      expect(afterExpiry.body).toEqual(first.body);
      expect(afterExpiry.headers['idempotent-replayed']).toBe('true');
      expect(otherKey.status).toBe(200);
      expect(otherKey.body.hold_id).not.toBe(first.body.hold_id);
      expect(await seatsRemaining(short, demo, experience, slot.id)).toBe(24 - 2);
    });
  });
});

describe('Idempotency-Key and the request deadline', () => {
  let t: TestApp;

  beforeAll(() => {
    t = createTestApp();
  });
  afterAll(() => t.close());

  /**
   * The API's own middleware around one idempotent route whose work ends with `answer` (which
   * answers or throws) 300 ms in, past a 150 ms deadline; sends its request with one
   * Idempotency-Key, as often as asked.
   */
  function lateRoute(answer: (res: Response) => void, before?: (res: Response) => void): () => request.Test {
    const app = express()
      .use(requestLogger(pino({ level: 'silent' })))
      .use(requestDeadline(150))
      .use(express.json());
    app.post('/late', idempotencyFor(t.deps.redis, t.deps.config)(`late-${randomUUID()}`), async (_req, res) => {
      before?.(res);
      await sleep(300);
      answer(res);
    });
    app.use(errorHandler);
    const key = randomUUID();
    return () => request(app).post('/late').set('Idempotency-Key', key).send({ n: 1 });
  }

  it('when a request is refused (4xx) after its deadline answered 503, then a retry with its key gets that refusal, not an in-flight conflict', async () => {
    const send = lateRoute(() => {
      throw new AppError('slot_not_found');
    });

    const first = await send();
    expect([first.status, first.body.error]).toEqual([503, 'service_unavailable']);

    // Once the late refusal is stored (IDEMPOTENCY_IN_FLIGHT_SECONDS would otherwise keep the key
    // in flight for a minute), the retry replays it.
    const retry = await waitUntil(
      async () => {
        const res = await send();
        return res.status !== 409 && res;
      },
      { timeoutMs: 5_000, intervalMs: 100, what: 'the retry to stop meeting an in-flight key' },
    );
    expect([retry.status, retry.body.error, retry.headers['idempotent-replayed']]).toEqual([
      404,
      'slot_not_found',
      'true',
    ]);
  });

  it.each<{ how: string; answer: (res: Response) => void; status: number; before?: (res: Response) => void }>([
    { how: 'without setting a status', answer: (res) => res.json({ done: true }), status: 200 },
    { how: 'with status 201', answer: (res) => res.status(201).json({ done: true }), status: 201 },
    {
      how: 'with status 201 set before its work',
      answer: (res) => res.json({ done: true }),
      status: 201,
      before: (res) => res.status(201),
    },
  ])(
    'when a request succeeds $how after its deadline answered 503, then a retry with its key gets that answer',
    async ({ answer, status, before }) => {
      const send = lateRoute(answer, before);

      expect((await send()).status).toBe(503);

      const retry = await waitUntil(
        async () => {
          const res = await send();
          return res.status !== 409 && res;
        },
        { timeoutMs: 5_000, intervalMs: 100, what: 'the retry to stop meeting an in-flight key' },
      );
      expect([retry.status, retry.body, retry.headers['idempotent-replayed']]).toEqual([
        status,
        { done: true },
        'true',
      ]);
    },
  );

  it('when a request fails (5xx) after its deadline answered 503, then its key stays in flight: the work may have been done', async () => {
    const send = lateRoute(() => {
      throw new Error('the work failed after the deadline');
    });

    expect((await send()).status).toBe(503);
    await sleep(500); // past the late failure, which nothing can be awaited for from here
    const retry = await send();
    expect([retry.status, retry.body.error]).toEqual([409, 'idempotency_request_in_progress']);
  });
});

describe('Idempotency-Key on a route whose work answers its retries (rebuildsAnswers)', () => {
  let t: TestApp;

  beforeAll(() => {
    t = createTestApp();
  });
  afterAll(() => t.close());

  /**
   * The API's own middleware around one route that rebuilds its answers, whose runs answer as
   * `runs[n]` says (the nth run of the route, from 0); sends its request with one Idempotency-Key.
   */
  function rebuildingRoute(runs: ((res: Response) => Promise<void> | void)[]) {
    let calls = 0;
    const app = express()
      .use(requestLogger(pino({ level: 'silent' })))
      .use(requestDeadline(5_000))
      .use(express.json());
    const once = idempotencyFor(t.deps.redis, t.deps.config);
    const scope = `work-${randomUUID()}`;
    app.post('/work', once(scope, undefined, { rebuildsAnswers: { forSeconds: 86_400 } }), async (_req, res) => {
      const run = runs[calls++];
      if (!run) throw new Error('more runs than the test planned');
      await run(res);
    });
    app.use(errorHandler);
    const key = randomUUID();
    return {
      send: () => request(app).post('/work').set('Idempotency-Key', key).send({ n: 1 }),
      calls: () => calls,
      /** The Redis record of the key (there is one key per route). */
      record: async () => {
        const [name, ...others] = await t.deps.redis.keys(`idem:${scope}:rebuilt:*`);
        if (!name || others.length > 0) throw new Error(`expected one record of ${scope}`);
        return name;
      },
    };
  }

  it('when a retry takes over a key about to lapse, then the key lives on at least as long as a run may work', async () => {
    const route = rebuildingRoute([
      () => {
        throw new Error('the first run fails (5xx): its claim stays');
      },
      (res) => void res.json({ ran: 2 }),
    ]);
    expect((await route.send()).status).toBe(500);
    const record = await route.record();
    expect(await t.deps.redis.ttl(record)).toBeGreaterThan(t.deps.config.idempotencyInFlightSeconds);
    await t.deps.redis.expire(record, 2);

    expect((await route.send()).body).toEqual({ ran: 2 });

    const left = await t.deps.redis.ttl(record);
    expect(left).toBeGreaterThanOrEqual(t.deps.config.idempotencyInFlightSeconds - 1);
    expect(left).toBeLessThanOrEqual(t.deps.config.idempotencyInFlightSeconds);
  });

  it('when a 2xx was answered, then a retry runs the route again rather than replaying a stored answer', async () => {
    const route = rebuildingRoute([(res) => void res.json({ run: 1 }), (res) => void res.json({ run: 2 })]);

    expect((await route.send()).body).toEqual({ run: 1 });
    expect((await route.send()).body).toEqual({ run: 2 });
    expect(route.calls()).toBe(2);
  });

  it('when a 4xx was answered and no later run took the key over, then a retry replays it without running', async () => {
    const route = rebuildingRoute([
      () => {
        throw new AppError('insufficient_capacity');
      },
    ]);

    expect((await route.send()).status).toBe(409);
    const retry = await route.send();

    expect([retry.status, retry.body.error, retry.headers['idempotent-replayed']]).toEqual([
      409,
      'insufficient_capacity',
      'true',
    ]);
    expect(route.calls()).toBe(1);
  });

  it('when a retry takes the key over and refuses while the first run still works, then its refusal is not stored: the first run may yet do the work', async () => {
    let letFirstAnswer!: () => void;
    const firstMayAnswer = new Promise<void>((resolve) => (letFirstAnswer = resolve));
    const route = rebuildingRoute([
      async (res) => {
        await within(firstMayAnswer, 5_000, 'the first run to be let go');
        res.json({ placed: true });
      },
      () => {
        throw new AppError('insufficient_capacity');
      },
      (res) => void res.json({ placed: true, found: true }),
    ]);

    const first = route.send().then((res) => res);
    await waitUntil(async () => route.calls() === 1, { timeoutMs: 5_000, intervalMs: 10, what: 'the first run' });
    const retry = await route.send();
    letFirstAnswer();

    expect([retry.status, (await first).status]).toEqual([409, 200]);
    const next = await route.send();
    expect([next.status, next.body, next.headers['idempotent-replayed']]).toEqual([
      200,
      { placed: true, found: true },
      undefined,
    ]);
    expect(route.calls()).toBe(3);
  });

  it('when a retry takes the key over while the first run works, then the first run refusing later stores nothing, and the next retry gets the work again', async () => {
    let letFirstAnswer!: () => void;
    const firstMayAnswer = new Promise<void>((resolve) => (letFirstAnswer = resolve));
    const route = rebuildingRoute([
      async () => {
        await within(firstMayAnswer, 5_000, 'the first run to be let go');
        throw new AppError('insufficient_capacity');
      },
      (res) => void res.json({ placed: true }),
      (res) => void res.json({ placed: true, again: true }),
    ]);

    const first = route.send().then((res) => res);
    await waitUntil(async () => route.calls() === 1, { timeoutMs: 5_000, intervalMs: 10, what: 'the first run' });
    const retry = await route.send();
    letFirstAnswer();

    expect([(await first).status, retry.status]).toEqual([409, 200]);
    const next = await route.send();
    expect([next.status, next.body]).toEqual([200, { placed: true, again: true }]);
    expect(route.calls()).toBe(3);
  });
});

import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import { bookingBody, clientIp, createTestApp, kayak, placeHold, seedTenant, type TestApp } from '@booking/test-kit';

const RATE_LIMIT = /^"(\w+)"; r=(\d+); t=(\d+)$/;
const RATE_LIMIT_POLICY = /^"(\w+)"; q=(\d+); w=(\d+); pk=:[A-Za-z0-9+/=]+:$/;

/** The remaining budget from a draft-8 `RateLimit` header. */
function remaining(res: request.Response): number {
  const match = RATE_LIMIT.exec(String(res.headers['ratelimit']));
  if (!match) throw new Error(`no RateLimit header: ${String(res.headers['ratelimit'])}`);
  return Number(match[2]);
}

/** Drops the rate-limit counters of the given client addresses, so a rerun within a minute starts afresh. */
async function resetBudgets(t: TestApp, ips: string[]): Promise<void> {
  await t.deps.redis.del(...ips.flatMap((ip) => [`rl:holds:${ip}`, `rl:bookings:${ip}`]));
}

/**
 * Drops the hold counters of loopback clients (what req.ip is when X-Forwarded-For is not
 * believed), and only those. Bounded: at most 100 SCAN rounds.
 */
async function resetLoopbackHoldBudgets(t: TestApp): Promise<void> {
  let cursor = '0';
  for (let round = 0; round < 100; round++) {
    const [next, keys] = await t.deps.redis.scan(cursor, 'MATCH', 'rl:holds:*', 'COUNT', 1000);
    const loopback = keys.filter((key) => {
      const address = key.slice('rl:holds:'.length);
      return (
        address.startsWith('127.') ||
        address === '::1' ||
        address.startsWith('::/') ||
        address.startsWith('::ffff:127.')
      );
    });
    if (loopback.length > 0) await t.deps.redis.del(...loopback);
    cursor = next;
    if (cursor === '0') return;
  }
}

describe('per-IP rate limits', () => {
  let t: TestApp;
  let demo: DemoTenant;

  beforeAll(() => {
    t = createTestApp();
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    demo = await seedTenant(t.deps);
  });

  const holdBody = () => {
    const { experience, slot } = kayak(demo);
    return { slot_id: slot.id, experience_id: experience.id, seats: 1 };
  };
  const postHold = (app: TestApp, ip: string) =>
    request(app.app).post('/api/bookings/hold').set('X-Forwarded-For', ip).send(holdBody());

  it('when an IP has placed 10 holds within a minute, then the 11th is 429 rate_limited with RateLimit headers', async () => {
    const ip = clientIp();
    await resetBudgets(t, [ip]);

    const allowed: request.Response[] = [];
    for (let i = 0; i < 10; i++) allowed.push(await postHold(t, ip));
    const limited = await postHold(t, ip);

    expect(allowed.map((res) => res.status)).toEqual(Array(10).fill(200));
    expect(allowed.map(remaining)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
    for (const res of allowed) {
      expect(res.headers['ratelimit']).toMatch(RATE_LIMIT);
      expect(res.headers['ratelimit-policy']).toMatch(RATE_LIMIT_POLICY);
      const [, name, quota, window] = RATE_LIMIT_POLICY.exec(String(res.headers['ratelimit-policy']))!;
      expect({ name, quota, window }).toEqual({ name: 'holds', quota: '10', window: '60' });
    }

    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ error: 'rate_limited', detail: { retry_after_seconds: expect.any(Number) } });
    expect(limited.body.detail.retry_after_seconds).toBeGreaterThanOrEqual(1);
    expect(limited.body.detail.retry_after_seconds).toBeLessThanOrEqual(60);
    expect(Number(limited.headers['retry-after'])).toBe(limited.body.detail.retry_after_seconds);
    expect(remaining(limited)).toBe(0);
    expect(Number(RATE_LIMIT.exec(String(limited.headers['ratelimit']))![3])).toBeLessThanOrEqual(60);
    expect(limited.headers['ratelimit-policy']).toMatch(/^"holds"; q=10; w=60; /);
    // The old X-RateLimit-* headers are not sent.
    expect(limited.headers['x-ratelimit-limit']).toBeUndefined();
  });

  it('when one IP is rate limited, then another IP can still place holds', async () => {
    const [limitedIp, otherIp] = [clientIp(), clientIp()];
    await resetBudgets(t, [limitedIp, otherIp]);
    for (let i = 0; i < 10; i++) await postHold(t, limitedIp).expect(200);
    await postHold(t, limitedIp).expect(429);

    const res = await postHold(t, otherIp);

    expect(res.status).toBe(200);
    expect(remaining(res)).toBe(9);
  });

  it('when an IP has made 5 booking requests within a minute, then the 6th is 429 and creates nothing', async () => {
    const tenant = demo;
    const { experience, slot } = kayak(tenant);
    const [ip, otherIp] = [clientIp(), clientIp()];
    await resetBudgets(t, [ip, otherIp]);
    const holds: string[] = [];
    for (let i = 0; i < 6; i++) holds.push(await placeHold(t, ip, experience, slot.id, 1));

    const allowed: request.Response[] = [];
    for (const holdId of holds.slice(0, 5)) {
      allowed.push(
        await request(t.app)
          .post('/api/bookings')
          .set('X-Forwarded-For', ip)
          .send(bookingBody(tenant, experience, slot.id, holdId, 1)),
      );
    }
    const limited = await request(t.app)
      .post('/api/bookings')
      .set('X-Forwarded-For', ip)
      .send(bookingBody(tenant, experience, slot.id, holds[5]!, 1));

    expect(allowed.map((res) => res.status)).toEqual([201, 201, 201, 201, 201]);
    expect(allowed.map(remaining)).toEqual([4, 3, 2, 1, 0]);
    expect(allowed[0]!.headers['ratelimit-policy']).toMatch(/^"bookings"; q=5; w=60; /);
    expect(limited.status).toBe(429);
    expect(limited.body.error).toBe('rate_limited');
    expect(limited.headers['ratelimit']).toMatch(/^"bookings"; r=0; /);
    expect(await t.deps.db.booking.count({ where: { tenantId: tenant.tenant.id } })).toBe(5);

    // Another client is unaffected.
    const otherHold = await placeHold(t, otherIp, experience, slot.id, 1);
    await request(t.app)
      .post('/api/bookings')
      .set('X-Forwarded-For', otherIp)
      .send(bookingBody(tenant, experience, slot.id, otherHold, 1))
      .expect(201);
  });

  it('when two app instances share Redis, then they share one budget per IP', async () => {
    const second = createTestApp();
    try {
      const ip = clientIp();
      await resetBudgets(t, [ip]);

      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await postHold(t, ip)).status);
      for (let i = 0; i < 4; i++) statuses.push((await postHold(second, ip)).status);
      const onFirst = await postHold(t, ip);
      const onSecond = await postHold(second, ip);

      expect(statuses).toEqual(Array(10).fill(200));
      expect(onFirst.status).toBe(429);
      expect(onSecond.status).toBe(429);
      expect(onSecond.body.error).toBe('rate_limited');
    } finally {
      await second.close();
    }
  });

  it('when RATE_LIMIT_* settings are given, then they replace the spec limits', async () => {
    const strict = createTestApp({ RATE_LIMIT_HOLDS_PER_MINUTE: '3', RATE_LIMIT_BOOKINGS_PER_MINUTE: '2' });
    try {
      const ip = clientIp();
      await resetBudgets(strict, [ip]);

      const holds: number[] = [];
      for (let i = 0; i < 4; i++) holds.push((await postHold(strict, ip)).status);
      // The booking budget is counted before the body is read: even refused requests use it.
      const bookings: request.Response[] = [];
      for (let i = 0; i < 3; i++)
        bookings.push(await request(strict.app).post('/api/bookings').set('X-Forwarded-For', ip).send({}));

      expect(holds).toEqual([200, 200, 200, 429]);
      expect(bookings.map((res) => res.status)).toEqual([400, 400, 429]);
      expect(bookings[0]!.headers['ratelimit-policy']).toMatch(/^"bookings"; q=2; w=60; /);
      expect(bookings[2]!.body.error).toBe('rate_limited');
    } finally {
      await strict.close();
    }
  });

  it('when X-Forwarded-For is trusted (TRUST_PROXY=1), then each forwarded client has its own budget', async () => {
    const strict = createTestApp({ RATE_LIMIT_HOLDS_PER_MINUTE: '3' });
    try {
      const ips = [clientIp(), clientIp(), clientIp(), clientIp()];
      await resetBudgets(strict, ips);

      const responses: request.Response[] = [];
      for (const ip of ips) responses.push(await postHold(strict, ip));

      expect(responses.map((res) => res.status)).toEqual([200, 200, 200, 200]);
      expect(responses.map(remaining)).toEqual([2, 2, 2, 2]);
    } finally {
      await strict.close();
    }
  });

  it('when TRUST_PROXY=false, then X-Forwarded-For is ignored and every request from this socket address shares one budget', async () => {
    const direct = createTestApp({ TRUST_PROXY: 'false', RATE_LIMIT_HOLDS_PER_MINUTE: '3' });
    // express-rate-limit warns (once) on console that X-Forwarded-For arrives while not trusted: that is the point here.
    const warnings = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      await resetLoopbackHoldBudgets(direct);

      // Different forwarded addresses each time: were they believed, none would ever be limited.
      // Other test files may use the loopback budget at the same moment, which can only make the
      // limit bite sooner, so the assertions allow for that.
      const responses: request.Response[] = [];
      for (let i = 0; i < 4; i++) {
        const res = await postHold(direct, clientIp());
        responses.push(res);
        if (res.status === 429) break;
      }

      const statuses = responses.map((res) => res.status);
      expect(statuses[statuses.length - 1]).toBe(429);
      expect(statuses.filter((status) => status === 200).length).toBeLessThanOrEqual(3);
      expect(statuses.slice(0, -1).every((status) => status === 200)).toBe(true);
      const budgets = responses.map(remaining);
      for (let i = 1; i < budgets.length; i++) {
        if (budgets[i - 1]! > 0) expect(budgets[i]).toBeLessThan(budgets[i - 1]!);
      }
      expect(responses[responses.length - 1]!.body.error).toBe('rate_limited');
      expect(responses[0]!.headers['ratelimit-policy']).toMatch(/^"holds"; q=3; w=60; /);
    } finally {
      warnings.mockRestore();
      await resetLoopbackHoldBudgets(direct);
      await direct.close();
    }
  });

  it('when a request is rate limited, then its Idempotency-Key is not used up', async () => {
    const ip = clientIp();
    await resetBudgets(t, [ip]);
    for (let i = 0; i < 10; i++) await postHold(t, ip).expect(200);
    const key = randomUUID();

    const limited = await request(t.app)
      .post('/api/bookings/hold')
      .set('X-Forwarded-For', ip)
      .set('Idempotency-Key', key)
      .send(holdBody());
    await resetBudgets(t, [ip]);
    const retried = await request(t.app)
      .post('/api/bookings/hold')
      .set('X-Forwarded-For', ip)
      .set('Idempotency-Key', key)
      .send(holdBody());

    expect(limited.status).toBe(429);
    expect(retried.status).toBe(200);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect(retried.body.hold_id).toEqual(expect.any(String));
  });
});

import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { DemoTenant } from '@booking/db';
import {
  bookingBody,
  clientIp,
  createTestApp,
  freePort,
  kayak,
  killAllServiceProcesses,
  placeHold,
  seedTenant,
  type ServiceProcess,
  startServiceProcess,
  type TestApp,
  waitUntil,
} from '@booking/test-kit';

// The API killed with SIGKILL in the middle of a burst of idempotent requests, then a new API
// process on the same PostgreSQL and Redis. Every client retries with its own key and body
// until it gets an answer: each must get the work its first request committed, and no work may
// be done twice.
const IN_FLIGHT_SECONDS = 12;
const RETRY_WINDOW_MS = 30_000;

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

describe('kill -9 of the API mid-burst, then retries with the same Idempotency-Key', () => {
  let t: TestApp;
  let demo: DemoTenant;
  let env: Record<string, string>;
  let port: number;

  beforeAll(async () => {
    t = createTestApp();
    demo = await seedTenant(t.deps);
    port = await freePort();
    env = {
      PORT: String(port),
      TRUST_PROXY: '1',
      // In flight for less than the default minute, so the test waits seconds, not a minute:
      // the deadline and transaction bounds shrink with it (the settings must add up).
      IDEMPOTENCY_IN_FLIGHT_SECONDS: String(IN_FLIGHT_SECONDS),
      REQUEST_TIMEOUT_MS: '6000',
      DB_CONNECT_TIMEOUT_MS: '2000',
      DB_TRANSACTION_TIMEOUT_MS: '5000',
      RATE_LIMIT_HOLDS_PER_MINUTE: '10000',
      RATE_LIMIT_BOOKINGS_PER_MINUTE: '10000',
    };
  });
  afterAll(async () => {
    await killAllServiceProcesses();
    await t.close();
  });

  const startApi = (name: string): Promise<ServiceProcess> =>
    startServiceProcess({
      name,
      entry: path.join('apps', 'api', 'src', 'main.ts'),
      env,
      readyUrl: `http://127.0.0.1:${port}/healthz`,
    });

  async function post(route: string, ip: string, key: string, body: object): Promise<Answer> {
    const res = await fetch(`http://127.0.0.1:${port}${route}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': ip, 'Idempotency-Key': key },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  /** Retries until the answer is final: not "still in flight" (409), not unavailable (5xx). */
  function retryUntilFinal(route: string, ip: string, key: string, body: object): Promise<Answer> {
    return waitUntil(
      async () => {
        const answer = await post(route, ip, key, body).catch(() => null);
        const pending = !answer || answer.status >= 500 || answer.body.error === 'idempotency_request_in_progress';
        return !pending && answer;
      },
      { timeoutMs: RETRY_WINDOW_MS, intervalMs: 200, what: `a final answer to ${key}` },
    );
  }

  it('when bookings are cut off after their commit, then every retry gets the committed booking and none is made twice', async () => {
    const { experience } = kayak(demo);
    const slots = [experience.slots[1]!.id, experience.slots[2]!.id, experience.slots[3]!.id];
    const requests = await Promise.all(
      Array.from({ length: 30 }, async (_, i) => {
        const ip = clientIp();
        const slotId = slots[i % slots.length]!;
        const holdId = await placeHold(t, ip, experience, slotId, 1);
        return { ip, key: randomUUID(), holdId, body: bookingBody(demo, experience, slotId, holdId, 1) };
      }),
    );
    const holdIds = requests.map((r) => r.holdId);
    const committed = () => t.deps.db.booking.count({ where: { holdId: { in: holdIds } } });

    const first = await startApi('api-1');
    const firstTries = requests.map((r) => post('/api/bookings', r.ip, r.key, r.body).catch(() => null));
    // Killed right after the first commit, so the burst is cut off mid-flight.
    await waitUntil(async () => (await committed()) > 0, { timeoutMs: 10_000, intervalMs: 2, what: 'a first commit' });
    await first.kill();
    const firstAnswers = await Promise.all(firstTries);
    const atKill = new Set(
      (await t.deps.db.booking.findMany({ where: { holdId: { in: holdIds } }, select: { holdId: true } })).map(
        (b) => b.holdId,
      ),
    );

    const restartedAt = Date.now();
    await startApi('api-2');
    const readyMs = Date.now() - restartedAt;
    const finals = await Promise.all(requests.map((r) => retryUntilFinal('/api/bookings', r.ip, r.key, r.body)));

    const bookings = await t.deps.db.booking.findMany({ where: { holdId: { in: holdIds } } });
    const bookingOfHold = new Map(bookings.map((b) => [b.holdId, b.id]));
    const cutOff = firstAnswers.filter((a) => a === null).length;
    const cutOffCommitted = requests.filter((r, i) => firstAnswers[i] === null && atKill.has(r.holdId)).length;
    console.info(
      `api kill -9: ${requests.length} bookings, ${atKill.size} committed at the kill, ${cutOff} cut off ` +
        `(${cutOffCommitted} of them after their commit); restart ${readyMs} ms, all answered ` +
        `${Date.now() - restartedAt} ms after it: ${JSON.stringify(countBy(finals.map((f) => f.status)))}`,
    );

    expect(atKill.size).toBeGreaterThan(0);
    expect(finals.map((f) => f.status)).toEqual(requests.map(() => 201));
    expect(bookings).toHaveLength(requests.length);
    requests.forEach((r, i) => expect(finals[i]!.body.booking_id).toBe(bookingOfHold.get(r.holdId)));
  }, 60_000);

  it('when holds are cut off, then a retry with the key returns the hold its first run placed, and no seat is held twice', async () => {
    const { experience } = kayak(demo);
    const slotId = experience.slots[4]!.id;
    const requests = Array.from({ length: 20 }, () => ({
      ip: clientIp(),
      key: randomUUID(),
      body: { slot_id: slotId, experience_id: experience.id, seats: 1 },
    }));
    const liveSeats = async () => (await t.deps.holds.liveSeats([slotId])).get(slotId) ?? 0;
    const before = await liveSeats();

    const first = await startApi('api-3');
    const firstTries = requests.map((r) => post('/api/bookings/hold', r.ip, r.key, r.body).catch(() => null));
    await waitUntil(async () => (await liveSeats()) !== before, {
      timeoutMs: 10_000,
      intervalMs: 2,
      what: 'a first hold to be placed',
    });
    await first.kill();
    const firstAnswers = await Promise.all(firstTries);

    await startApi('api-4');
    const finals = await Promise.all(requests.map((r) => retryUntilFinal('/api/bookings/hold', r.ip, r.key, r.body)));

    expect(finals.map((f) => f.status)).toEqual(requests.map(() => 200));
    const holdIds = new Set(finals.map((f) => f.body.hold_id));
    expect(holdIds.size).toBe(requests.length);
    // Every seat held on the slot belongs to a hold some client was answered with.
    expect((await liveSeats()) - before).toBe(requests.length);
    requests.forEach((_, i) => {
      if (firstAnswers[i]?.status === 200) expect(finals[i]!.body.hold_id).toBe(firstAnswers[i]!.body.hold_id);
    });
  }, 60_000);
});

function countBy(values: number[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}

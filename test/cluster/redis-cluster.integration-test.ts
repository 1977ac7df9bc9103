import { createHash, randomUUID } from 'node:crypto';
import path from 'node:path';
import { REDIS_TIMEOUT_DEFAULTS } from '@booking/config';
import type { DemoTenant } from '@booking/db';
import { WEDGED_AFTER_MS } from '@booking/jobs';
import { signWebhookPayload } from '@booking/signing';
import {
  bookingBody,
  clientIp,
  createIsolatedDatabase,
  createTestApp,
  freePort,
  killAllServiceProcesses,
  seedTenant,
  sleep,
  startRedisCluster,
  startServiceProcess,
  waitUntil,
  WebhookReceiver,
  type RedisCluster,
  type ServiceProcess,
  type TestApp,
} from '@booking/test-kit';
import request from 'supertest';

// The service on a Redis Cluster of the test's own (3 masters, 3 replicas): two API processes,
// a dispatcher and a lifecycle worker as OS processes, on a throw-away database. Holds, the race
// to the last seats, idempotent retries, rate limits and webhook deliveries go through both APIs;
// then the master serving one slot and the delivery queue is SIGKILLed and the test shows what
// docs/redis-cluster.md says: requests during the failover get 503 service_unavailable in the
// Error shape, then everything works again, with no hold lost, no seat oversold and every event
// delivered once.

const HOLDS_PER_MINUTE = 5;
const NODE_TIMEOUT_MS = 2_000;

interface Answer {
  status: number;
  body: Record<string, unknown>;
  replayed: boolean;
}

describe('Redis Cluster: two APIs, a dispatcher and a lifecycle worker', () => {
  let cluster: RedisCluster;
  let drop: () => Promise<void> = async () => undefined;
  let t: TestApp | undefined;
  let receiver: WebhookReceiver | undefined;
  let env: Record<string, string>;
  let apis: string[];
  let demo: DemoTenant;
  let signingSecret: string;
  let queuePrefix: string;
  let dispatcher: ServiceProcess | undefined;
  const startedAt = Date.now();

  beforeAll(async () => {
    cluster = await startRedisCluster({ nodeTimeoutMs: NODE_TIMEOUT_MS });
    const isolated = await createIsolatedDatabase();
    drop = isolated.drop;
    queuePrefix = `{${isolated.env.QUEUE_PREFIX}}`;
    env = {
      ...isolated.env,
      REDIS_CLUSTER_NODES: cluster.seeds,
      TRUST_PROXY: '1',
      RATE_LIMIT_HOLDS_PER_MINUTE: String(HOLDS_PER_MINUTE),
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_RETRY_DELAYS_MS: '0,200,400,800,1600,3200',
      WEBHOOK_TIMEOUT_MS: '2000',
      WEBHOOK_RELAY_INTERVAL_MS: '100',
      WEBHOOK_SWEEP_INTERVAL_MS: '2000',
      LOG_LEVEL: 'warn',
    };
    t = createTestApp(env);
    receiver = await WebhookReceiver.start();
    await seedVenue();

    const ports = {
      api1: await freePort(),
      api2: await freePort(),
      api1Metrics: await freePort(),
      api2Metrics: await freePort(),
      metrics: await freePort(),
      worker: await freePort(),
    };
    apis = [`http://127.0.0.1:${ports.api1}`, `http://127.0.0.1:${ports.api2}`];
    const start = (name: string, entry: string[], extra: Record<string, string>, readyUrl: string) =>
      startServiceProcess({
        name,
        entry: path.join(...entry),
        env: { ...env, ...extra },
        readyUrl,
        readyWithinMs: 60_000,
      });
    const started = await Promise.all<ServiceProcess>([
      start(
        'api-1',
        ['apps', 'api', 'src', 'main.ts'],
        { PORT: String(ports.api1), API_METRICS_PORT: String(ports.api1Metrics) },
        `${apis[0]}/readyz`,
      ),
      start(
        'api-2',
        ['apps', 'api', 'src', 'main.ts'],
        { PORT: String(ports.api2), API_METRICS_PORT: String(ports.api2Metrics) },
        `${apis[1]}/readyz`,
      ),
      start(
        'dispatcher',
        ['apps', 'dispatcher', 'src', 'main.ts'],
        { METRICS_PORT: String(ports.metrics) },
        `http://127.0.0.1:${ports.metrics}/healthz`,
      ),
      start(
        'lifecycle-worker',
        ['apps', 'api', 'src', 'jobs', 'worker-main.ts'],
        { WORKER_HEALTH_PORT: String(ports.worker) },
        `http://127.0.0.1:${ports.worker}/healthz`,
      ),
    ]);
    dispatcher = started.find((service) => service.name === 'dispatcher');
  }, 120_000);

  afterAll(async () => {
    await Promise.allSettled([killAllServiceProcesses(), receiver?.close(), t?.close()]);
    await Promise.allSettled([drop(), cluster?.stop()]);
    console.log(`cluster test ran ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
  }, 60_000);

  /** A tenant of its own with an endpoint on the receiver for its booking.created events. */
  async function seedVenue(): Promise<void> {
    demo = await seedTenant(t!.deps);
    const endpoint = await request(t!.app)
      .post('/api/webhooks/endpoints')
      .set('Authorization', `Bearer ${demo.api_keys.admin}`)
      .send({ url: receiver!.url, events: ['booking.created'] });
    expect(endpoint.status).toBe(201);
    signingSecret = endpoint.body.signing_secret as string;
  }

  async function post(api: string, route: string, body: object, headers: Record<string, string> = {}): Promise<Answer> {
    const res = await fetch(`${api}${route}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': clientIp(), ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    return {
      status: res.status,
      body: (await res.json()) as Record<string, unknown>,
      replayed: res.headers.get('Idempotent-Replayed') === 'true',
    };
  }

  const experience = () => demo.experiences[0]!;
  // A slot more than an hour ahead: open to holds for the whole suite.
  const isFuture = (slot: { starts_at: string }) => Date.parse(slot.starts_at) > Date.now() + 3_600_000;
  // Slots of the experiences that take a party of one.
  const futureSlots = () =>
    demo.experiences
      .filter((e) => e.min_party_size === 1)
      .flatMap((e) => e.slots.filter(isFuture).map((slot) => ({ e, slot })));
  const holdBody = (e: DemoTenant['experiences'][number], slotId: string, seats: number) => ({
    slot_id: slotId,
    experience_id: e.id,
    seats,
  });
  // The slot's hash tag as docs/redis-cluster.md gives it: a hold id begins with it.
  const tagOf = (slotId: string) => createHash('sha1').update(slotId).digest('hex').slice(0, 4);

  it('when both APIs race for the last seats of a slot, then exactly its capacity is held and booked', async () => {
    const e = experience();
    const slot = e.slots.find(isFuture)!;
    const tries = await Promise.all(
      Array.from({ length: slot.capacity + 12 }, (_, i) =>
        post(apis[i % 2]!, '/api/bookings/hold', holdBody(e, slot.id, 1)),
      ),
    );
    const placed = tries.filter((a) => a.status === 200);
    expect(placed).toHaveLength(slot.capacity);
    expect(tries.filter((a) => a.status === 409).map((a) => a.body.error)).toEqual(
      Array(12).fill('insufficient_capacity'),
    );
    // Every hold id carries its slot's tag, which keeps the slot's keys and records on one node.
    for (const hold of placed) expect(String(hold.body.hold_id).slice(0, 4)).toBe(tagOf(slot.id));

    const bookings = await Promise.all(
      placed.map((hold, i) =>
        post(apis[(i + 1) % 2]!, '/api/bookings', bookingBody(demo, e, slot.id, String(hold.body.hold_id), 1)),
      ),
    );
    expect(bookings.map((b) => b.status)).toEqual(Array(slot.capacity).fill(201));
    const seats = await t!.deps.db.booking.aggregate({ where: { slotId: slot.id }, _sum: { guestCount: true } });
    expect(seats._sum.guestCount).toBe(slot.capacity);

    // Every booking.created reaches the receiver once, signed with the endpoint's secret.
    const ids = new Set(bookings.map((b) => String(b.body.booking_id)));
    await receiver!.waitFor(
      (requests) => requests.filter((r) => ids.has(bookingIdOf(r.body))).length >= ids.size,
      30_000,
    );
    const received = receiver!.requests.filter((r) => ids.has(bookingIdOf(r.body)));
    expect(received).toHaveLength(ids.size);
    for (const r of received) {
      const signature = signWebhookPayload(signingSecret, Number(r.headers['x-service-timestamp']), r.body);
      expect(r.headers['x-service-signature']).toBe(signature);
    }
  }, 60_000);

  it('when a request is retried on the other API with the same Idempotency-Key, then it is replayed, not redone', async () => {
    const e = experience();
    // A key is the client's: the same client (address) retries it.
    const client = { 'X-Forwarded-For': clientIp() };
    const key = randomUUID();
    const body = holdBody(e, futureSlots().filter((s) => s.e.id === e.id)[1]!.slot.id, 2);
    const first = await post(apis[0]!, '/api/bookings/hold', body, { ...client, 'Idempotency-Key': key });
    const retry = await post(apis[1]!, '/api/bookings/hold', body, { ...client, 'Idempotency-Key': key });
    expect(first.status).toBe(200);
    expect(retry).toEqual({ ...first, replayed: true });

    const booking = bookingBody(demo, e, body.slot_id, String(first.body.hold_id), 2);
    const bookingKey = randomUUID();
    const booked = await post(apis[1]!, '/api/bookings', booking, { ...client, 'Idempotency-Key': bookingKey });
    const again = await post(apis[0]!, '/api/bookings', booking, { ...client, 'Idempotency-Key': bookingKey });
    expect(booked.status).toBe(201);
    expect(again).toEqual({ ...booked, replayed: true });
    expect(await t!.deps.db.booking.count({ where: { holdId: String(first.body.hold_id) } })).toBe(1);
  }, 30_000);

  it("when a booking names another slot's hold, then it is told so, as on a single Redis, though the hold's record is under another slot's tag", async () => {
    // A tenant of its own: the seat this hold keeps is on no slot another test counts.
    const own = await seedTenant(t!.deps);
    const e = own.experiences.find((x) => x.min_party_size === 1)!;
    const [held, named] = e.slots
      .filter(isFuture)
      .map((slot) => slot.id)
      .filter((id, i, ids) => ids.findIndex((other) => tagOf(other) === tagOf(id)) === i);
    const hold = await post(apis[0]!, '/api/bookings/hold', holdBody(e, held!, 1));
    expect(hold.status).toBe(200);

    const booking = await post(apis[1]!, '/api/bookings', bookingBody(own, e, named!, String(hold.body.hold_id), 1));
    expect([booking.status, booking.body.error]).toEqual([400, 'experience_slot_mismatch']);
  }, 30_000);

  it('when one client sends holds to both APIs, then they share one per-IP budget', async () => {
    const e = experience();
    const slotId = futureSlots().filter((s) => s.e.id === e.id)[2]!.slot.id;
    const ip = clientIp();
    const answers: Answer[] = [];
    for (let i = 0; i < HOLDS_PER_MINUTE + 3; i += 1) {
      answers.push(await post(apis[i % 2]!, '/api/bookings/hold', holdBody(e, slotId, 1), { 'X-Forwarded-For': ip }));
    }
    expect(answers.map((a) => a.status)).toEqual([...Array(HOLDS_PER_MINUTE).fill(200), 429, 429, 429]);
    expect(answers.at(-1)!.body).toMatchObject({ error: 'rate_limited' });
  }, 30_000);

  it('when the master of a slot and of the queue is killed, then requests get 503 or wait until a replica takes over, and nothing is lost or doubled', async () => {
    const queueMaster = await cluster.masterOf(queuePrefix);
    // A slot whose keys live on that master too, so one kill takes holds and deliveries down.
    let target:
      { e: DemoTenant['experiences'][number]; slot: DemoTenant['experiences'][number]['slots'][number] } | undefined;
    for (let tries = 0; !target && tries < 5; tries += 1) {
      for (const candidate of futureSlots().slice(3)) {
        if ((await cluster.masterOf(`{${tagOf(candidate.slot.id)}}`)).port === queueMaster.port) target = candidate;
      }
      // Another tenant brings other slot ids, and its own endpoint: its bookings are delivered too.
      if (!target) await seedVenue();
    }
    expect(target).toBeDefined();
    const { e, slot } = target!;

    // Before: a third of the slot held, and those holds booked.
    const before = await Promise.all(
      Array.from({ length: 8 }, (_, i) => post(apis[i % 2]!, '/api/bookings/hold', holdBody(e, slot.id, 1))),
    );
    expect(before.map((a) => [a.status, a.status === 200 ? '' : a.body.error])).toEqual(Array(8).fill([200, '']));
    const beforeBookings = await Promise.all(
      before.map((hold, i) =>
        post(apis[i % 2]!, '/api/bookings', bookingBody(demo, e, slot.id, String(hold.body.hold_id), 1)),
      ),
    );
    expect(beforeBookings.map((b) => b.status)).toEqual(Array(8).fill(201));
    // Replication to the replica is asynchronous: the holds above reach it before the kill (a hold
    // lost in a failover frees its seats early, as docs/redis-cluster.md says). The bookings'
    // delivery jobs may still be queued as the master dies, and be lost: the sweeper's case.
    await cluster.replicated(queueMaster, queuePrefix);

    await queueMaster.kill();
    const killedAt = Date.now();
    // Meanwhile, concurrent holds of one seat on slots of every master, eight at a time, as a
    // busy venue sends them: a failover may refuse them (503), never fail them (500).
    let probing = true;
    const others = futureSlots().filter((candidate) => candidate.slot.id !== slot.id);
    const background: Answer[] = [];
    const traffic = (async () => {
      for (let round = 0; probing && round < 500; round += 1) {
        const batch = Array.from({ length: 8 }, (_, i) => others[(round * 8 + i) % others.length]!);
        background.push(
          ...(await Promise.all(
            batch.map((o, i) => post(apis[i % 2]!, '/api/bookings/hold', holdBody(o.e, o.slot.id, 1))),
          )),
        );
      }
    })();
    // Hold requests every 100 ms through both APIs until three in a row succeed.
    const during: { at: number; tookMs: number; answer: Answer }[] = [];
    let okInARow = 0;
    while (okInARow < 3 && Date.now() - killedAt < 30_000) {
      const sentAt = Date.now();
      const answer = await post(apis[during.length % 2]!, '/api/bookings/hold', holdBody(e, slot.id, 1));
      during.push({ at: Date.now() - killedAt, tookMs: Date.now() - sentAt, answer });
      okInARow = answer.status === 200 ? okInARow + 1 : 0;
      await sleep(100); // pacing of the probe, not a wait for a state
    }
    probing = false;
    await traffic;
    const statuses = new Map<number, number>();
    for (const answer of background) statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
    console.log(`failover: concurrent holds on other slots answered ${JSON.stringify(Object.fromEntries(statuses))}`);
    expect(background.length).toBeGreaterThan(0);
    for (const answer of background) {
      expect([200, 409, 503]).toContain(answer.status);
      if (answer.status !== 200) expect(typeof answer.body.error).toBe('string');
    }
    const failed = during.filter((d) => d.answer.status !== 200);
    const recoveredAt = during.at(-3)!.at;
    console.log(
      `failover: ${failed.length} of ${during.length} hold requests failed, the last at ${failed.at(-1)?.at ?? 0} ms; ` +
        `holds succeed again from ${recoveredAt} ms after the kill`,
    );
    expect(okInARow).toBe(3);
    // The kill took the slot down: its requests failed, or (a busy machine stretching the
    // client's retries past the failover) the first one was answered only once a replica served it.
    expect(failed.length > 0 || during[0]!.at >= NODE_TIMEOUT_MS).toBe(true);
    for (const { answer } of failed) {
      expect(answer.status).toBe(503);
      expect(answer.body).toMatchObject({ error: 'service_unavailable' });
    }
    await cluster.waitHealthy();

    // After: the holds placed before the kill still count, so the rest of the slot and no more
    // can be held; every hold placed in the probe is one of them. A probe answered 503 because
    // its hold's command timed out (REDIS_COMMAND_TIMEOUT_MS, the default here) on a busy machine
    // may still have placed the hold, which then stands until it expires: the rest is smaller by
    // at most those.
    const placedInProbe = during.filter((d) => d.answer.status === 200).length;
    const timedOut = failed.filter((d) => d.tookMs >= REDIS_TIMEOUT_DEFAULTS.commandTimeoutMs).length;
    const left = slot.capacity - 8 - placedInProbe;
    const after = await Promise.all(
      Array.from({ length: left + 5 }, (_, i) => post(apis[i % 2]!, '/api/bookings/hold', holdBody(e, slot.id, 1))),
    );
    const heldAfter = after.filter((a) => a.status === 200).length;
    expect(heldAfter).toBeLessThanOrEqual(left);
    expect(heldAfter).toBeGreaterThanOrEqual(Math.max(1, left - timedOut));
    expect(after.filter((a) => a.status === 409)).toHaveLength(left + 5 - heldAfter);
    const afterBooking = await post(
      apis[1]!,
      '/api/bookings',
      bookingBody(demo, e, slot.id, String(after.find((a) => a.status === 200)!.body.hold_id), 1),
    );
    expect(afterBooking.status).toBe(201);

    // Every booking of the slot, before and after the failover, is delivered exactly once.
    const ids = new Set([...beforeBookings, afterBooking].map((b) => String(b.body.booking_id)));
    // A delivery job caught mid-flight by the kill comes back through BullMQ's stalled-job check
    // (a lock and a half); one the kill lost, through the sweeper (its grace, then a tick), whose
    // worker the failover may have wedged: it is replaced once a tick has waited WEDGED_AFTER_MS.
    await receiver!
      .waitFor(
        (requests) => new Set(requests.map((r) => bookingIdOf(r.body)).filter((id) => ids.has(id))).size === ids.size,
        WEDGED_AFTER_MS + 45_000,
      )
      .catch(async (error: Error) => {
        const seen = new Set(receiver!.requests.map((r) => bookingIdOf(r.body)));
        const missing = [...ids].filter((id) => !seen.has(id));
        const events = await t!.deps.db.event.findMany({
          where: { entityId: { in: missing }, name: 'booking.created' },
          select: {
            entityId: true,
            createdAt: true,
            relayedAt: true,
            deliveries: { select: { id: true, status: true, attemptCount: true, updatedAt: true } },
          },
        });
        throw new Error(
          `${error.message}\nnot delivered: ${JSON.stringify(events)}\n` +
            `dispatcher said:\n${dispatcher?.output.join('\n')}`,
        );
      });
    // Only a job can send a delivery again, and a job caught by the kill stays until the
    // stalled-job check hands it out again (which finds the delivery done and sends nothing):
    // once no job of these deliveries is left, nothing can arrive a second time.
    const deliveryIds = (
      await t!.deps.db.webhookDelivery.findMany({
        where: { event: { entityId: { in: [...ids] }, name: 'booking.created' } },
        select: { id: true },
      })
    ).map((d) => d.id);
    expect(deliveryIds).toHaveLength(ids.size);
    await waitUntil(
      async () => (await Promise.all(deliveryIds.map((id) => t!.deps.deliveryQueue.getJob(id)))).every((j) => !j),
      { timeoutMs: 45_000, intervalMs: 200, what: () => 'the delivery jobs of these bookings to be gone' },
    );
    const counts = new Map<string, number>();
    for (const r of receiver!.requests) {
      const id = bookingIdOf(r.body);
      if (ids.has(id)) counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    expect([...counts.values()]).toEqual(Array(ids.size).fill(1));
    console.log(
      `failover: deliveries of ${ids.size} bookings each arrived once; ${Date.now() - killedAt} ms after the kill`,
    );
  }, 240_000);

  it('when no node of the cluster answers, then a hold is refused at once with 503, not queued until Redis returns', async () => {
    const { e, slot } = futureSlots().at(-1)!;
    await Promise.all(cluster.nodes.map((node) => node.kill()));
    // The APIs notice the lost connections before the next request.
    await sleep(500);
    const answers: { ms: number; status: number; error: unknown }[] = [];
    for (const api of apis) {
      const started = Date.now();
      const answer = await post(api, '/api/bookings/hold', holdBody(e, slot.id, 1));
      answers.push({ ms: Date.now() - started, status: answer.status, error: answer.body.error });
    }
    console.log(`all nodes down: ${JSON.stringify(answers)}`);
    for (const answer of answers) {
      expect(answer).toMatchObject({ status: 503, error: 'service_unavailable' });
      // Far below the 15 s request deadline, which would also answer 503.
      expect(answer.ms).toBeLessThan(5_000);
    }
  }, 30_000);
});

/** The booking id a booking.created delivery is about. */
function bookingIdOf(body: string): string {
  try {
    return (JSON.parse(body) as { data?: { booking_id?: string } }).data?.booking_id ?? '';
  } catch {
    return '';
  }
}

import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { DemoTenant } from '@booking/db';
import {
  bookingBody,
  createTestApp,
  freePort,
  kayak,
  killAllServiceProcesses,
  seedTenant,
  sleep,
  startHaproxy,
  startRedisServer,
  startServiceProcess,
  waitUntil,
  within,
  type Haproxy,
  type RedisServer,
  type ServiceProcess,
  type TestApp,
} from '@booking/test-kit';
import { LoopbackClient, randomLoopbackAddress, type Answer } from './loopback-client';

// Two API processes behind a real HAProxy on loopback, as operators run them: round robin,
// `option forwardfor`, health checks on /readyz, TRUST_PROXY=1. Shared state lives in PostgreSQL
// and in a Redis of this test's own (so no other test's counters or keys meet these), and that is
// what keeps rate limits and Idempotency-Keys whole across replicas. Then one replica is taken
// out with SIGTERM under steady load, and no client may see a failure.
const HOLDS_PER_MINUTE = 10;
const DRAIN_MS = 3_000;
const REPLICAS = ['api-1', 'api-2'];

describe('two API replicas behind HAProxy', () => {
  let redis: RedisServer;
  let t: TestApp;
  let demo: DemoTenant;
  let proxy: Haproxy | undefined;
  const apis = new Map<string, ServiceProcess>();
  let ports: number[] = [];
  const clients: LoopbackClient[] = [];

  const client = (address?: string) => {
    const made = new LoopbackClient(proxy!.url, address);
    clients.push(made);
    return made;
  };

  beforeAll(async () => {
    redis = await startRedisServer();
    t = createTestApp({ REDIS_URL: redis.url });
    demo = await seedTenant(t.deps);
    ports = await Promise.all(REPLICAS.map(() => freePort()));
    const metricsPorts = await Promise.all(REPLICAS.map(() => freePort()));
    const started = await Promise.all(
      REPLICAS.map((name, i) =>
        startServiceProcess({
          name,
          entry: path.join('apps', 'api', 'src', 'main.ts'),
          env: {
            PORT: String(ports[i]),
            // Two replicas on one host: each its own metrics port.
            API_METRICS_PORT: String(metricsPorts[i]),
            REDIS_URL: redis.url,
            // One proxy in front: the last X-Forwarded-For entry, the one HAProxy adds, is the client.
            TRUST_PROXY: '1',
            SHUTDOWN_DRAIN_MS: String(DRAIN_MS),
            RATE_LIMIT_HOLDS_PER_MINUTE: String(HOLDS_PER_MINUTE),
            // Bookings are what the idempotency test repeats; their limit is not under test.
            RATE_LIMIT_BOOKINGS_PER_MINUTE: '10000',
          },
          readyUrl: `http://127.0.0.1:${ports[i]}/readyz`,
          readyWithinMs: 60_000,
        }),
      ),
    );
    started.forEach((api) => apis.set(api.name, api));
    proxy = await startHaproxy({ upstreams: REPLICAS.map((name, i) => ({ name, port: ports[i]! })) });
    await proxy.waitFor('UP', REPLICAS);
  }, 120_000);

  afterAll(async () => {
    for (const c of clients) c.close();
    await proxy?.stop();
    await killAllServiceProcesses();
    await t?.close();
    await redis?.kill();
  });

  const holdBody = (slotId: string, seats = 1) => ({
    slot_id: slotId,
    experience_id: kayak(demo).experience.id,
    seats,
  });

  it('when two clients place holds through both replicas, then each gets exactly its per-IP limit and one client being limited does not limit the other', async () => {
    const slotId = kayak(demo).experience.slots[1]!.id;
    const [first, second] = [client(), client()];

    // The first client also sends an X-Forwarded-For of its choosing each time: HAProxy appends
    // the address it really came from, and that is the one the API believes.
    const firstAnswers = await Promise.all(
      Array.from({ length: 25 }, () =>
        first.request('POST', '/api/bookings/hold', {
          headers: { 'X-Forwarded-For': randomLoopbackAddress() },
          body: holdBody(slotId),
        }),
      ),
    );
    const secondAnswers = await Promise.all(
      Array.from({ length: 12 }, () => second.request('POST', '/api/bookings/hold', { body: holdBody(slotId) })),
    );

    const statuses = (answers: Answer[]) => answers.map((a) => a.status).sort();
    expect(statuses(firstAnswers)).toEqual([...Array(HOLDS_PER_MINUTE).fill(200), ...Array(15).fill(429)]);
    expect(statuses(secondAnswers)).toEqual([...Array(HOLDS_PER_MINUTE).fill(200), ...Array(2).fill(429)]);
    expect(firstAnswers.filter((a) => a.status === 429).map((a) => a.body.error)).toEqual(
      Array(15).fill('rate_limited'),
    );
    // Both replicas counted against the same budgets.
    expect(new Set(firstAnswers.map((a) => a.servedBy))).toEqual(new Set(REPLICAS));
    expect(new Set(secondAnswers.map((a) => a.servedBy))).toEqual(new Set(REPLICAS));
    expect((await t.deps.holds.liveSeats([slotId])).get(slotId)).toBe(2 * HOLDS_PER_MINUTE);
  }, 30_000);

  /** Sends until the answer is final (not 409 in progress), at most 50 times. */
  async function untilFinal(send: () => Promise<Answer>): Promise<Answer[]> {
    const seen: Answer[] = [];
    for (let attempt = 0; attempt < 50; attempt++) {
      const answer = await send();
      seen.push(answer);
      if (answer.body.error !== 'idempotency_request_in_progress') return seen;
      await sleep(50); // the first request is still running: a retry waits a moment, as a client would
    }
    throw new Error(`no final answer after 50 tries: ${JSON.stringify(seen.at(-1))}`);
  }

  it('when one Idempotency-Key is sent again and again, at once, to both replicas, then one hold and one booking are made and every answer is the same', async () => {
    const { experience } = kayak(demo);
    const slotId = experience.slots[3]!.id;
    const guest = client();

    // A hold, sent three times one after the other: round robin takes the copies to both replicas.
    const holdKey = randomUUID();
    const holds: Answer[] = [];
    for (let i = 0; i < 3; i++) {
      holds.push(
        await guest.request('POST', '/api/bookings/hold', {
          headers: { 'Idempotency-Key': holdKey },
          body: holdBody(slotId, 2),
        }),
      );
    }
    expect(holds.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(new Set(holds.map((a) => a.body.hold_id)).size).toBe(1);
    expect(holds.map((a) => a.headers['idempotent-replayed'])).toEqual([undefined, 'true', 'true']);
    expect(new Set(holds.map((a) => a.servedBy))).toEqual(new Set(REPLICAS));
    expect((await t.deps.holds.liveSeats([slotId])).get(slotId)).toBe(2);

    // The booking, 12 copies at once; copies that meet the first still running are retried.
    const holdId = String(holds[0]!.body.hold_id);
    const bookingKey = randomUUID();
    const body = bookingBody(demo, experience, slotId, holdId, 2);
    const tries = await Promise.all(
      Array.from({ length: 12 }, () =>
        untilFinal(() => guest.request('POST', '/api/bookings', { headers: { 'Idempotency-Key': bookingKey }, body })),
      ),
    );
    const finals = tries.map((seen) => seen.at(-1)!);

    expect(finals.map((a) => a.status)).toEqual(Array(12).fill(201));
    const bookingIds = new Set(finals.map((a) => a.body.booking_id));
    expect(bookingIds.size).toBe(1);
    expect(finals.filter((a) => a.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    expect(new Set(tries.flat().map((a) => a.servedBy))).toEqual(new Set(REPLICAS));
    expect(await t.deps.db.booking.count({ where: { holdId } })).toBe(1);
    expect(await t.deps.db.booking.findUnique({ where: { id: String([...bookingIds][0]) } })).not.toBeNull();
  }, 30_000);

  it('when a replica gets SIGTERM under steady load, then it drains without a failed request and the other carries on', async () => {
    const { experience } = kayak(demo);
    const slot = await t.deps.db.slot.create({
      data: {
        tenantId: demo.tenant.id,
        experienceId: experience.id,
        startsAt: new Date(Date.now() + 30 * 86_400_000),
        endsAt: new Date(Date.now() + 30 * 86_400_000 + 7_200_000),
        capacity: 100_000,
      },
    });
    const widget = `/api/widget/experience?tenant=${demo.tenant.slug}&experience=${experience.slug}`;
    const leaving = apis.get('api-1')!;

    // Steady load: 8 clients, each a guest placing holds (a new client address every
    // HOLDS_PER_MINUTE holds, so none is rate limited) and reading the widget, until told to stop.
    interface Outcome {
      at: number;
      what: string;
      status: number;
      servedBy: string;
      error?: string;
    }
    const outcomes: Outcome[] = [];
    let running = true;
    const worker = async () => {
      while (running) {
        const guest = client();
        for (let i = 0; i < HOLDS_PER_MINUTE && running; i++) {
          for (const [what, send] of [
            ['hold', () => guest.request('POST', '/api/bookings/hold', { body: holdBody(slot.id) })],
            ['read', () => guest.request('GET', widget)],
          ] as const) {
            try {
              const answer = await send();
              outcomes.push({ at: Date.now(), what, status: answer.status, servedBy: answer.servedBy });
            } catch (error) {
              outcomes.push({ at: Date.now(), what, status: 0, servedBy: '', error: String(error) });
            }
          }
        }
        guest.close();
      }
    };
    const workers = Array.from({ length: 8 }, worker);

    await sleep(1_500); // steady load on both replicas before one leaves
    // Every line it logs from here on: its drain must write no error line.
    let logged = '';
    leaving.child.stdout!.on('data', (chunk: Buffer) => (logged += chunk.toString('utf8')));
    const termAt = Date.now();
    const stopped = leaving.stop(DRAIN_MS + 15_000);

    // While it drains it still answers, says it is not ready, and closes each connection it answers on.
    const direct = new LoopbackClient(`http://127.0.0.1:${ports[0]}`);
    clients.push(direct);
    const readiness = await waitUntil(
      async () => {
        const answer = await direct.request('GET', '/readyz');
        return answer.status === 503 && answer;
      },
      { timeoutMs: 2_000, intervalMs: 20, what: 'the leaving replica to fail /readyz' },
    );
    const liveness = await direct.request('GET', '/healthz');
    await proxy!.waitFor('DOWN', ['api-1'], DRAIN_MS);
    const downAt = Date.now();
    await within(stopped, DRAIN_MS + 15_000, 'the leaving replica to exit');
    const exitedAt = Date.now();
    await sleep(1_500); // the remaining replica alone, under the same load
    running = false;
    await Promise.all(workers);

    const failed = outcomes.filter((o) => o.status !== 200);
    const afterTerm = outcomes.filter((o) => o.at > termAt);
    const stats = await proxy!.stats();
    console.info(
      `drain behind HAProxy: ${outcomes.length} requests (${afterTerm.length} after SIGTERM), ${failed.length} failed; ` +
        `api-1 out of rotation ${downAt - termAt} ms after SIGTERM, exited after ${exitedAt - termAt} ms ` +
        `(drain ${DRAIN_MS} ms); answered after SIGTERM: api-1 ${afterTerm.filter((o) => o.servedBy === 'api-1').length}, ` +
        `api-2 ${afterTerm.filter((o) => o.servedBy === 'api-2').length}; HAProxy: ` +
        stats.map((s) => `${s.name} ${s.status} retries ${s.retries} redispatches ${s.redispatches}`).join(', '),
    );

    expect(readiness.body).toEqual({ error: 'service_unavailable', detail: { draining: true } });
    expect(readiness.headers['retry-after']).toBe('1');
    // The proxy's probes of the draining replica are answered 503 on purpose: warn, no error line.
    expect(logged).toMatch(/"level":40,.*"statusCode":503/);
    expect(logged.split('\n').filter((line) => /"level":(50|60)/.test(line))).toEqual([]);
    expect(liveness.status).toBe(200);
    expect(liveness.headers.connection).toBe('close');
    expect(await leaving.exited).toBe('exit 0');
    expect(failed).toEqual([]);
    // It kept serving until the proxy had taken it out, and never after it had gone.
    expect(afterTerm.some((o) => o.servedBy === 'api-1')).toBe(true);
    expect(outcomes.filter((o) => o.at > exitedAt && o.servedBy !== 'api-2')).toEqual([]);
    expect(outcomes.filter((o) => o.at > exitedAt).length).toBeGreaterThan(20);
    // Out of rotation before its listener closed: the proxy never had to retry a request on it.
    expect(stats.find((s) => s.name === 'api-1')).toMatchObject({ status: 'DOWN', retries: 0, redispatches: 0 });
  }, 60_000);
});

import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { createPrismaClient, type Db } from '@booking/db';
import { recordEvent } from '@booking/events';
import { generateWebhookSecret, sealSecret } from '@booking/signing';
import { createDeliveryQueue, queueConnection } from '@booking/webhook-queue';
import { createBooking, createIsolatedDatabase, createTestApp, seedTenant, sleep, waitUntil } from '@booking/test-kit';
import { killAllDispatcherProcesses, startDispatcherProcess, type DispatcherProcess } from './support/crash-dispatcher';
import { startReceiver, type Receipt, type Receiver, type Respond } from './support/crash-receiver';

// Crash recovery, with dispatchers as real OS processes that are SIGKILLed: "no event is ever
// lost; a crash of the API, the relay or a worker at any point leads at worst to a repeated
// attempt with the same delivery id". Every scenario has its own database and queue prefix, so
// its dispatchers take only its own events and jobs. Receivers listen on 127.0.0.1 only.

const SECRET_KEY = 'crash-test-key-that-seals-webhook-signing-secrets';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/** A 3 s request timeout gives a 10 s job lock (see jobLockMs), so a killed worker's job moves on within ~15 s. */
const WEBHOOK_ENV = {
  NODE_ENV: 'test',
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  WEBHOOK_RETRY_DELAYS_MS: '0,200,400,600,800,1000',
  WEBHOOK_TIMEOUT_MS: '3000',
  WEBHOOK_RELAY_INTERVAL_MS: '100',
  WEBHOOK_SWEEP_INTERVAL_MS: '500',
  WEBHOOK_SECRET_KEY: SECRET_KEY,
  // (c) refuses every first attempt: 20 of them in a row would disable the endpoint (tested elsewhere).
  WEBHOOK_AUTO_DISABLE_AFTER: '1000',
};

interface Scenario {
  db: Db;
  /** DATABASE_URL and QUEUE_PREFIX of this scenario, with the webhook settings. */
  env: Record<string, string>;
  secret: string;
  receiver: Receiver;
  dispatcher(name: string): Promise<DispatcherProcess>;
  /** A tenant and an endpoint subscribed to booking.created, written directly. */
  endpoint(): Promise<{ tenantId: string; endpointId: string }>;
  /** `count` booking.created events committed to the outbox, `perTransaction` at a time. */
  bookingEvents(tenantId: string, count: number, perTransaction?: number): Promise<string[]>;
}

/** Runs `body` on a fresh database, queue prefix and receiver; tears everything down after. */
async function inScenario(respond: Respond, body: (s: Scenario) => Promise<void>): Promise<void> {
  const isolated = await createIsolatedDatabase();
  const env: Record<string, string> = { ...isolated.env, ...WEBHOOK_ENV };
  const db = createPrismaClient(env.DATABASE_URL!, { poolSize: 3 });
  const secret = generateWebhookSecret();
  const receiver = await startReceiver(secret, respond);
  const dispatchers: DispatcherProcess[] = [];
  const s: Scenario = {
    db,
    env,
    secret,
    receiver,
    async dispatcher(name) {
      const dispatcher = await startDispatcherProcess(name, env);
      dispatchers.push(dispatcher);
      return dispatcher;
    },
    async endpoint() {
      const tenant = await db.tenant.create({ data: { slug: `crash-${randomUUID()}`, name: 'Crash test venue' } });
      const endpoint = await db.webhookEndpoint.create({
        data: {
          tenantId: tenant.id,
          url: receiver.url,
          events: ['booking.created'],
          secretCiphertext: sealSecret(SECRET_KEY, secret),
        },
      });
      return { tenantId: tenant.id, endpointId: endpoint.id };
    },
    async bookingEvents(tenantId, count, perTransaction = count) {
      const ids: string[] = [];
      while (ids.length < count) {
        const batch = Math.min(perTransaction, count - ids.length);
        ids.push(
          ...(await db.$transaction(async (tx) => {
            const made: string[] = [];
            for (let i = 0; i < batch; i += 1) made.push(await recordEvent(tx, bookingCreated(tenantId)));
            return made;
          })),
        );
      }
      return ids;
    },
  };
  try {
    await body(s);
  } catch (error) {
    // What the dispatchers printed (LOG_LEVEL=warn) usually says why.
    const logs = dispatchers.map((d) => `--- dispatcher ${d.name} (last lines):\n${d.output.join('\n')}`).join('\n');
    if (error instanceof Error && logs) error.message += `\n${logs}`;
    throw error;
  } finally {
    await Promise.allSettled(dispatchers.map((dispatcher) => dispatcher.kill()));
    await receiver.close();
    await db.$disconnect();
    const connection = queueConnection(REDIS_URL);
    const queue = createDeliveryQueue(connection, env.QUEUE_PREFIX!);
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    await connection.quit();
    await isolated.drop();
  }
}

function bookingCreated(tenantId: string) {
  const bookingId = randomUUID();
  return {
    tenantId,
    name: 'booking.created' as const,
    entityType: 'booking' as const,
    entityId: bookingId,
    fields: {
      booking_id: bookingId,
      experience_id: randomUUID(),
      venue_id: randomUUID(),
      slot_id: randomUUID(),
      customer_email: `guest-${bookingId.slice(0, 8)}@example.com`,
      guest_count: 2,
    },
  };
}

/** The receiver package accepted it, and the header id is the body id: what a receiver dedupes on. */
function expectDedupable(receipt: Receipt): void {
  expect(receipt.verifyError).toBeNull();
  expect(receipt.deliveryId).toEqual(expect.stringMatching(/^[0-9a-f-]{36}$/));
  expect(receipt.envelope?.id).toBe(receipt.deliveryId);
}

const succeededCount = (db: Db) => db.webhookDelivery.count({ where: { status: 'succeeded' } });

afterAll(() => killAllDispatcherProcesses());

describe('webhook delivery survives crashes', () => {
  it('(a) a dispatcher SIGKILLed mid-delivery: a second one sends the same delivery id again, and it succeeds once', async () => {
    // The first request of the delivery is held open: the dispatcher is killed while it waits.
    await inScenario(
      (_receipt, seen) => (seen === 1 ? 'hold' : 200),
      async ({ db, receiver, dispatcher, endpoint, bookingEvents }) => {
        const { tenantId } = await endpoint();
        const [eventId] = await bookingEvents(tenantId, 1);

        const first = await dispatcher('first');
        await waitUntil(() => receiver.receipts.length >= 1, {
          timeoutMs: 15_000,
          what: 'the first request to arrive',
        });
        await first.kill();
        const killedAt = Date.now();
        expect(await first.exited).toBe('SIGKILL');
        // The kernel closed the killed process's socket: the receiver never got to answer.
        await waitUntil(() => receiver.receipts[0]!.droppedUnanswered, {
          timeoutMs: 5_000,
          what: 'the held request to drop',
        });
        const delivery = await db.webhookDelivery.findFirstOrThrow({ where: { eventId } });
        expect(delivery).toMatchObject({ status: 'pending', attemptCount: 0 });
        expect(receiver.receipts[0]!.deliveryId).toBe(delivery.id);

        // The job is still "active" under the dead worker's lock; once the lock runs out, the
        // stalled-job check of the second dispatcher puts it back in the queue.
        await dispatcher('second');
        await waitUntil(
          async () =>
            (await db.webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } })).status === 'succeeded',
          {
            timeoutMs: 45_000,
            what: () => `delivery ${delivery.id} to succeed; receipts: ${receiver.receipts.length}`,
          },
        );
        const recoveredAfterMs = Date.now() - killedAt;
        if (process.env.CRASH_TEST_TIMINGS)
          process.stderr.write(`(a) recovered ${recoveredAfterMs} ms after the kill\n`);
        // Nothing more comes once it succeeded: a quiet window, slept on purpose.
        await sleep(1_500);

        const receipts = receiver.of(delivery.id);
        expect(receiver.receipts).toHaveLength(receipts.length);
        expect(receipts.length).toBeGreaterThanOrEqual(2);
        expect(receipts[0]).toMatchObject({ status: null, droppedUnanswered: true });
        expect(receipts.at(-1)).toMatchObject({ status: 200 });
        for (const receipt of receipts) {
          expectDedupable(receipt);
          expect(receipt.envelope?.data.event_id).toBe(eventId);
        }

        const settled = await db.webhookDelivery.findUniqueOrThrow({
          where: { id: delivery.id },
          include: { attempts: true },
        });
        expect(settled.status).toBe('succeeded');
        // The killed attempt never got recorded; the one that got through is recorded once.
        expect(settled.attempts.filter((attempt) => attempt.succeeded)).toHaveLength(1);
        expect(settled.attempts).toEqual([
          expect.objectContaining({ attemptNumber: 1, succeeded: true, statusCode: 200 }),
        ]);
        // The lock of a 3 s timeout is 10 s, checked every 5 s: back within a lock and a half.
        expect(recoveredAfterMs).toBeLessThan(30_000);
      },
    );
  }, 80_000);

  it('(b) deliveries committed without a job, and an API booking left in the outbox, arrive once a dispatcher starts', async () => {
    await inScenario(
      () => 200,
      async ({ db, env, receiver, dispatcher }) => {
        // No dispatcher runs yet. The API, in-process, on this scenario's database.
        const api = createTestApp(env);
        let apiClosed = false;
        try {
          const demo = await seedTenant(api.deps);
          const admin = `Bearer ${demo.api_keys.admin}`;
          const created = await request(api.app)
            .post('/api/webhooks/endpoints')
            .set('Authorization', admin)
            .send({ url: receiver.url, events: ['booking.created'] });
          expect(created.status).toBe(201);
          const endpointId = created.body.id as string;
          // The receiver verifies with the secret the API handed out, once.
          receiver.useSecret(created.body.signing_secret as string);
          const tenantId = demo.tenant.id;

          // 1. The relay committed deliveries (and marked their events relayed), then died before
          //    queuing them. One of them is mid-schedule: attempt 1 failed and its retry job was
          //    lost (Redis lost its data).
          const past = new Date(Date.now() - 60_000);
          const stranded = await db.$transaction(async (tx) => {
            const events = [
              await recordEvent(tx, bookingCreated(tenantId)),
              await recordEvent(tx, bookingCreated(tenantId)),
              await recordEvent(tx, bookingCreated(tenantId)),
            ];
            const ids = events.map(() => randomUUID());
            await tx.webhookDelivery.createMany({
              data: events.map((eventId, i) => ({
                id: ids[i]!,
                tenantId,
                endpointId,
                eventId,
                eventName: 'booking.created',
                status: 'pending' as const,
                createdAt: past,
                ...(i === 2 ? { attemptCount: 1, lastAttemptAt: past, nextAttemptAt: past } : {}),
              })),
            });
            await tx.webhookAttempt.create({
              data: {
                deliveryId: ids[2]!,
                attemptNumber: 1,
                startedAt: past,
                durationMs: 12,
                statusCode: 503,
                succeeded: false,
              },
            });
            await tx.event.updateMany({ where: { id: { in: events } }, data: { relayedAt: past } });
            return ids;
          });

          // 2. A booking made through the API: its booking.created is committed with it, in the
          //    outbox, and nothing else happens while no dispatcher runs.
          const { booking_id: bookingId } = await createBooking(api, demo);
          const outboxEvent = await db.event.findFirstOrThrow({
            where: { entityId: bookingId, name: 'booking.created' },
          });
          expect(outboxEvent.relayedAt).toBeNull();
          expect(await db.webhookDelivery.count({ where: { eventId: outboxEvent.id } })).toBe(0);
          expect(await api.deps.deliveryQueue.getJobCounts('waiting', 'active', 'delayed')).toEqual({
            waiting: 0,
            active: 0,
            delayed: 0,
          });
          await api.close();
          apiClosed = true;

          // A dispatcher starts: its sweeper queues the stranded deliveries, its relay the outbox.
          await dispatcher('only');
          await waitUntil(async () => (await succeededCount(db)) === 4, {
            timeoutMs: 20_000,
            what: () => `4 deliveries to succeed; receipts: ${receiver.receipts.length}`,
          });
          // A quiet window, slept on purpose: no further request may arrive in it.
          await sleep(1_000);

          const deliveries = await db.webhookDelivery.findMany({ include: { attempts: true } });
          expect(deliveries).toHaveLength(4);
          const fromOutbox = deliveries.find((delivery) => delivery.eventId === outboxEvent.id);
          expect(fromOutbox).toBeDefined();
          expect(new Set(deliveries.map((d) => d.id))).toEqual(new Set([...stranded, fromOutbox!.id]));
          for (const delivery of deliveries) {
            expect(delivery.status).toBe('succeeded');
            // Each arrived exactly once (no crash here), with its id, and verifies.
            const receipts = receiver.of(delivery.id);
            expect(receipts).toHaveLength(1);
            expect(receipts[0]!.status).toBe(200);
            expectDedupable(receipts[0]!);
            expect(receipts[0]!.envelope?.data.event_id).toBe(delivery.eventId);
          }
          expect(receiver.receipts).toHaveLength(4);
          expect(receiver.of(fromOutbox!.id)[0]!.envelope?.data).toMatchObject({
            event_id: outboxEvent.id,
            booking_id: bookingId,
            entity_type: 'booking',
            entity_id: bookingId,
          });
          // The mid-schedule one resumed where it was: attempt 2, after the recorded failure.
          const resumed = deliveries.find((delivery) => delivery.id === stranded[2]);
          expect(resumed?.attempts.sort((x, y) => x.attemptNumber - y.attemptNumber)).toEqual([
            expect.objectContaining({ attemptNumber: 1, succeeded: false, statusCode: 503 }),
            expect.objectContaining({ attemptNumber: 2, succeeded: true, statusCode: 200 }),
          ]);
          expect(resumed?.attemptCount).toBe(2);
        } finally {
          if (!apiClosed) await api.close();
        }
      },
    );
  }, 60_000);

  it('(c) receivers can dedupe: one delivery id per event and endpoint, in header and body, the same on every attempt', async () => {
    // Each delivery's first request is refused with a 500, so each is sent twice; two
    // dispatchers share the work.
    await inScenario(
      (_receipt, seen) => (seen === 1 ? 500 : 200),
      async ({ db, receiver, dispatcher, endpoint, bookingEvents }) => {
        const { tenantId } = await endpoint();
        await Promise.all([dispatcher('one'), dispatcher('two')]);
        const events = await bookingEvents(tenantId, 20, 5);

        await waitUntil(async () => (await succeededCount(db)) === 20, {
          timeoutMs: 30_000,
          what: () => `20 deliveries to succeed; receipts: ${receiver.receipts.length}`,
        });
        // A quiet window, slept on purpose: no further request may arrive in it.
        await sleep(1_000);

        const deliveries = await db.webhookDelivery.findMany({ include: { attempts: true } });
        expect(deliveries).toHaveLength(20);
        expect(new Set(deliveries.map((d) => d.eventId))).toEqual(new Set(events));

        // A receiver that acts once per delivery id does each event's work exactly once.
        const acted = new Map<string, string>();
        for (const receipt of receiver.receipts) {
          expectDedupable(receipt);
          if (receipt.status === 200 && !acted.has(receipt.deliveryId!)) {
            acted.set(receipt.deliveryId!, receipt.envelope!.data.event_id as string);
          }
        }
        expect(receiver.receipts).toHaveLength(40);
        expect(new Set(acted.values())).toEqual(new Set(events));

        for (const delivery of deliveries) {
          const [refused, accepted, ...more] = receiver.of(delivery.id);
          expect(more).toHaveLength(0);
          expect(refused?.status).toBe(500);
          expect(accepted?.status).toBe(200);
          // The repeat is the same delivery: same id, same body byte for byte (signed anew).
          expect(accepted?.rawBody).toBe(refused?.rawBody);
          expect(accepted?.envelope?.data.event_id).toBe(delivery.eventId);
          expect(delivery).toMatchObject({ status: 'succeeded', attemptCount: 2 });
          expect(delivery.attempts.map((a) => [a.attemptNumber, a.statusCode]).sort()).toEqual([
            [1, 500],
            [2, 200],
          ]);
        }
      },
    );
  }, 60_000);
});

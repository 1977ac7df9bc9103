import { randomUUID } from 'node:crypto';
import type { DemoTenant } from '@booking/db';
import { recordEvent, SUBSCRIBABLE_EVENTS } from '@booking/events';
import { generateWebhookSecret, sealSecret } from '@booking/signing';
import {
  answer,
  freePort,
  seedTenant,
  sleep,
  waitUntil,
  WebhookReceiver,
  type ReceivedRequest,
  type ReceiverBehaviour,
} from '@booking/test-kit';
// The receivers' own package, a dev dependency of the dispatcher.
import { verifyWebhook, WebhookVerificationError, type WebhookEnvelope } from '@booking/webhook-verify';
import { startHarness, TenantClient, TEST_RETRY_DELAYS_MS, type WebhookHarness } from './support/webhook-harness';

// Everything here is real: the API in-process, PostgreSQL, Redis/BullMQ, the dispatcher's relay
// and workers, and HTTP receivers on 127.0.0.1. Each test seeds a tenant of its own, so its
// endpoints only ever see its own events. Receivers stay open until the end of the file, so a
// port is never handed to a later test while an earlier test's retries may still aim at it.

/**
 * Longer than the largest gap of the test retry schedule: a delivery that has not moved by then
 * never will. Tests sleep this long, on purpose, to show that nothing more arrives: an absence
 * has no state to wait on.
 */
const QUIET_MS = TEST_RETRY_DELAYS_MS[TEST_RETRY_DELAYS_MS.length - 1]! + 400;

const receivers: WebhookReceiver[] = [];
async function receiver(behaviour?: ReceiverBehaviour): Promise<WebhookReceiver> {
  const started = await WebhookReceiver.start(behaviour);
  receivers.push(started);
  return started;
}

afterAll(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

function envelopeOf(request: ReceivedRequest): WebhookEnvelope {
  return JSON.parse(request.body) as WebhookEnvelope;
}

/** Null when the request verifies with one of `secrets`, otherwise the verifier's failure reason. */
function verificationFailure(
  rawBody: Buffer,
  headers: Record<string, string | string[] | undefined>,
  secrets: string[],
): string | null {
  try {
    verifyWebhook({ rawBody, headers, secrets });
    return null;
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.reason;
    throw error;
  }
}

describe('webhook delivery through the dispatcher', () => {
  let h: WebhookHarness;

  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  const db = () => h.t.deps.db;
  const newTenant = async (): Promise<TenantClient> => new TenantClient(h.t, await seedTenant(h.t.deps));
  const deliveriesOf = (endpointId: string) =>
    db().webhookDelivery.findMany({ where: { endpointId }, orderBy: { createdAt: 'asc' } });
  const attemptsOf = (deliveryId: string) =>
    db().webhookAttempt.findMany({ where: { deliveryId }, orderBy: { attemptNumber: 'asc' } });
  /** The one delivery of `endpointId` for `eventName` of `bookingId`, once the relay has made it. */
  const deliveryFor = (endpointId: string, bookingId: string, eventName = 'booking.created') =>
    waitUntil(
      () => db().webhookDelivery.findFirst({ where: { endpointId, eventName, event: { entityId: bookingId } } }),
      { what: `the ${eventName} delivery of ${bookingId}` },
    );
  const deliveryIn = (deliveryId: string, statuses: string[], timeoutMs = 10_000) =>
    waitUntil(
      async () => {
        const delivery = await db().webhookDelivery.findUniqueOrThrow({ where: { id: deliveryId } });
        return statuses.includes(delivery.status) && delivery;
      },
      { timeoutMs, what: `delivery ${deliveryId} to be ${statuses.join('/')}` },
    );
  /** Every event of the tenant has been through the relay (turned into deliveries or not). */
  const allRelayed = (tenantId: string, count: number) =>
    waitUntil(
      async () => {
        const events = await db().event.findMany({ where: { tenantId } });
        return events.length === count && events.every((e) => e.relayedAt !== null) && events;
      },
      { what: `${count} relayed events of tenant ${tenantId}` },
    );

  describe('delivery request', () => {
    it('when a booking is made, then its booking.created delivery reaches the receiver with the spec headers, a verifiable signature and the envelope', async () => {
      const tenant = await newTenant();
      const r = await receiver();
      const endpoint = await tenant.createEndpoint(r.url, ['booking.created']);

      const bookingId = await tenant.book({ guests: 3 });

      const [request] = await r.waitForCount(1);
      const received = request!;
      expect(received.method).toBe('POST');
      expect(received.url).toBe('/webhooks');
      expect(received.headers['content-type']).toMatch(/^application\/json/);
      const headers = received.headers;
      expect(headers['x-service-event']).toBe('booking.created');
      expect(headers['x-service-delivery-id']).toMatch(
        /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
      );
      const timestamp = String(headers['x-service-timestamp']);
      expect(timestamp).toMatch(/^\d+$/);
      // Milliseconds (13 digits today), taken when the attempt was sent.
      expect(Math.abs(Number(timestamp) - received.receivedAt)).toBeLessThan(5_000);
      expect(timestamp).toHaveLength(String(Date.now()).length);
      expect(headers['x-service-signature']).toMatch(/^v1,[0-9a-f]{64}$/);
      expect(headers['x-service-signature-previous']).toBeUndefined();

      const envelope = verifyWebhook({ rawBody: received.rawBody, headers, secrets: endpoint.signing_secret });
      const event = await db().event.findFirstOrThrow({ where: { entityId: bookingId, name: 'booking.created' } });
      const booking = await db().booking.findUniqueOrThrow({ where: { id: bookingId }, include: { customer: true } });
      expect(envelope).toEqual({
        id: headers['x-service-delivery-id'],
        event: 'booking.created',
        emitted_at: event.createdAt.toISOString(),
        data: {
          event_id: event.id,
          schema_version: 2,
          entity_type: 'booking',
          entity_id: bookingId,
          booking_id: bookingId,
          experience_id: booking.experienceId,
          venue_id: tenant.demo.venue_id,
          slot_id: booking.slotId,
          customer_email: booking.customer.email,
          guest_count: 3,
        },
      });
      expect(Object.keys(JSON.parse(received.body)).sort()).toEqual(['data', 'emitted_at', 'event', 'id']);
      expect(verificationFailure(received.rawBody, headers, [generateWebhookSecret()])).toBe('signature_mismatch');

      const delivery = await deliveryIn(envelope.id, ['succeeded']);
      expect(delivery).toMatchObject({ endpointId: endpoint.id, eventId: event.id, attemptCount: 1, isTest: false });
      const attempts = await attemptsOf(envelope.id);
      expect(attempts).toMatchObject([{ attemptNumber: 1, statusCode: 200, succeeded: true, responseBody: 'ok' }]);
    });

    it('when an event has sealed fields (a reissued gift card code), then the receiver gets them in data while the outbox keeps them sealed', async () => {
      const tenant = await newTenant();
      const r = await receiver();
      const endpoint = await tenant.createEndpoint(r.url, ['booking.reissued']);
      const bookingId = randomUUID();
      const code = 'ABCD-1234-EFGH-5678';

      const eventId = await db().$transaction((tx) =>
        recordEvent(tx, {
          tenantId: tenant.tenantId,
          name: 'booking.reissued',
          entityType: 'booking',
          entityId: bookingId,
          fields: {
            booking_id: bookingId,
            experience_id: randomUUID(),
            venue_id: randomUUID(),
            slot_id: randomUUID(),
            customer_email: 'guest@example.com',
            new_gift_card_id: randomUUID(),
            amount_cents: 500,
            actor_user_id: randomUUID(),
          },
          secretFields: { new_gift_card_code: code },
          secretKey: h.t.deps.config.webhooks.secretKey,
        }),
      );

      const [received] = await r.waitForCount(1);
      const envelope = verifyWebhook({
        rawBody: received!.rawBody,
        headers: received!.headers,
        secrets: endpoint.signing_secret,
      });
      expect(envelope.data).toMatchObject({ event_id: eventId, booking_id: bookingId, new_gift_card_code: code });
      const stored = await db().event.findUniqueOrThrow({ where: { id: eventId } });
      expect(JSON.stringify(stored)).not.toContain(code);
      expect(stored.sealedData).toMatch(/^v1\./);
    });

    it('when bookings are created, confirmed, checked in and cancelled, then each endpoint gets exactly the subscribed events, never booking.checked_in, and another tenant gets nothing', async () => {
      const tenant = await newTenant();
      const other = await newTenant();
      const everything = await receiver();
      const omitted = await receiver();
      const confirmedOnly = await receiver();
      const otherTenants = await receiver();
      const all = await tenant.createEndpoint(everything.url, []);
      const defaulted = await tenant.createEndpoint(omitted.url);
      const confirmed = await tenant.createEndpoint(confirmedOnly.url, ['booking.confirmed']);
      const foreign = await other.createEndpoint(otherTenants.url, []);
      expect(all.events).toEqual([]);
      expect(defaulted.events).toEqual([]);

      const checkedIn = await tenant.book({ confirmed: true });
      await tenant.checkIn(checkedIn);
      const cancelled = await tenant.book({ confirmed: true, guests: 1 });
      await tenant.cancel(cancelled);

      // Per gift-card booking: customer.created, booking.created, gift_card.redeemed and
      // booking.confirmed; then checked_in and cancelled: 10 events, 9 of them subscribable.
      await allRelayed(tenant.tenantId, 10);
      const customerOf = async (bookingId: string) =>
        (await db().booking.findUniqueOrThrow({ where: { id: bookingId } })).customerId;
      const expected = [
        `booking.cancelled ${cancelled}`,
        ...[cancelled, checkedIn].flatMap((id) => [
          `booking.confirmed ${id}`,
          `booking.created ${id}`,
          `gift_card.redeemed ${id}`,
        ]),
        `customer.created ${await customerOf(cancelled)}`,
        `customer.created ${await customerOf(checkedIn)}`,
      ].sort();
      const seen = (r: WebhookReceiver) => r.requests.map((q) => `${q.event} ${envelopeOf(q).data.entity_id}`).sort();
      await everything.waitForCount(9);
      await omitted.waitForCount(9);
      await confirmedOnly.waitForCount(2);
      await sleep(QUIET_MS);

      expect(seen(everything)).toEqual(expected);
      expect(seen(omitted)).toEqual(expected);
      expect(seen(confirmedOnly)).toEqual([`booking.confirmed ${cancelled}`, `booking.confirmed ${checkedIn}`].sort());
      expect(otherTenants.requests).toEqual([]);
      expect(await deliveriesOf(foreign.id)).toEqual([]);
      expect(await db().webhookDelivery.count({ where: { eventName: 'booking.checked_in' } })).toBe(0);
      expect(SUBSCRIBABLE_EVENTS).not.toContain('booking.checked_in');
      for (const [r, endpoint] of [
        [everything, all],
        [omitted, defaulted],
        [confirmedOnly, confirmed],
      ] as const) {
        for (const q of r.requests) {
          expect(verificationFailure(q.rawBody, q.headers, [endpoint.signing_secret])).toBeNull();
        }
        expect((await deliveriesOf(endpoint.id)).map((d) => d.status)).toEqual(r.requests.map(() => 'succeeded'));
      }

      const confirmation = confirmedOnly.requests.find((q) => envelopeOf(q).data.entity_id === checkedIn)!;
      const booking = await db().booking.findUniqueOrThrow({
        where: { id: checkedIn },
        include: { customer: true },
      });
      expect(envelopeOf(confirmation).data).toMatchObject({
        schema_version: 2,
        entity_type: 'booking',
        booking_id: checkedIn,
        experience_id: booking.experienceId,
        venue_id: tenant.demo.venue_id,
        slot_id: booking.slotId,
        customer_email: booking.customer.email,
        charge_amount_cents: booking.totalCents,
        net_paid_cents: booking.totalCents,
        currency: 'USD',
        method: 'gift_card',
      });
      const cancellation = everything.requests.find((q) => q.event === 'booking.cancelled')!;
      expect(envelopeOf(cancellation).data).toMatchObject({
        entity_type: 'booking',
        entity_id: cancelled,
        booking_id: cancelled,
        cancelled_by_user_id: expect.any(String),
      });
    });

    it('when a test delivery is requested, then it arrives signed with _test: true, and another tenant cannot request one', async () => {
      const tenant = await newTenant();
      const other = await newTenant();
      const r = await receiver();
      const endpoint = await tenant.createEndpoint(r.url, ['booking.created']);

      const res = await tenant.sendTest(endpoint.id, { event: 'booking.cancelled' });
      const foreign = await other.sendTest(endpoint.id);

      expect(res.status).toBe(202);
      expect(res.body).toEqual({ delivery_id: expect.any(String) });
      expect(foreign.status).toBe(404);
      expect(foreign.body).toEqual({ error: 'webhook_endpoint_not_found' });
      const [received] = await r.waitForCount(1);
      const envelope = verifyWebhook({
        rawBody: received!.rawBody,
        headers: received!.headers,
        secrets: endpoint.signing_secret,
      });
      expect(envelope).toEqual({
        id: res.body.delivery_id,
        event: 'booking.cancelled',
        emitted_at: expect.any(String),
        data: {
          event_id: expect.any(String),
          schema_version: 2,
          entity_type: 'booking',
          entity_id: expect.any(String),
        },
        _test: true,
      });
      expect(received!.headers['x-service-delivery-id']).toBe(res.body.delivery_id);
      await deliveryIn(res.body.delivery_id, ['succeeded']);
      await sleep(QUIET_MS);
      expect(r.requests).toHaveLength(1);
    });
  });

  describe('retries', () => {
    it('when the receiver answers 500 three times and then 200, then it gets 4 attempts with one delivery id on the schedule, and each is recorded', async () => {
      const tenant = await newTenant();
      const r = await receiver(answer.failFirst(3));
      const endpoint = await tenant.createEndpoint(r.url, ['booking.created']);

      const bookingId = await tenant.book();

      const delivery = await deliveryFor(endpoint.id, bookingId);
      await deliveryIn(delivery.id, ['succeeded']);
      await sleep(QUIET_MS);
      expect(r.requests).toHaveLength(4);
      expect(r.requests.map((q) => q.deliveryId)).toEqual([delivery.id, delivery.id, delivery.id, delivery.id]);
      expect(new Set(r.requests.map((q) => envelopeOf(q).id))).toEqual(new Set([delivery.id]));
      // Attempt n+1 waits the schedule's n+1-th delay after attempt n failed: 100, 200, 300 ms
      // (timed by the attempts' own start, as the receiver's arrival times add connect and send
      // times that a busy machine stretches).
      const started = (await attemptsOf(delivery.id)).map((a) => a.startedAt.getTime());
      expect(started).toHaveLength(4);
      const gaps = started.slice(1).map((at, i) => at - started[i]!);
      gaps.forEach((gap, i) => {
        expect(gap).toBeGreaterThanOrEqual(TEST_RETRY_DELAYS_MS[i + 1]! - 5);
        expect(gap).toBeLessThan(TEST_RETRY_DELAYS_MS[i + 1]! + 1_000);
      });
      for (const q of r.requests) {
        expect(verificationFailure(q.rawBody, q.headers, [endpoint.signing_secret])).toBeNull();
      }

      const res = await tenant.deliveries(endpoint.id);
      expect(res.status).toBe(200);
      expect(res.body.data).toHaveLength(1);
      expect(res.body.data[0]).toMatchObject({
        id: delivery.id,
        event: 'booking.created',
        status: 'succeeded',
        attempt_count: 4,
        next_attempt_at: null,
      });
      expect(res.body.data[0].attempts).toMatchObject([
        { attempt_number: 1, status_code: 500, succeeded: false, response_body: 'failure 1' },
        { attempt_number: 2, status_code: 500, succeeded: false, response_body: 'failure 2' },
        { attempt_number: 3, status_code: 500, succeeded: false, response_body: 'failure 3' },
        { attempt_number: 4, status_code: 200, succeeded: true, response_body: 'ok' },
      ]);
      for (const attempt of res.body.data[0].attempts) {
        expect(attempt).toEqual(
          expect.objectContaining({ started_at: expect.any(String), duration_ms: expect.any(Number) }),
        );
      }
      expect((await tenant.getEndpoint(endpoint.id)).body).toMatchObject({
        status: 'active',
        consecutive_failures: 0,
      });
    });

    it('when the receiver always answers 500, then it gets exactly 6 attempts and the delivery is abandoned', async () => {
      const tenant = await newTenant();
      const r = await receiver(answer.status(500, 'down'));
      const endpoint = await tenant.createEndpoint(r.url, ['booking.created']);

      const bookingId = await tenant.book();

      const delivery = await deliveryFor(endpoint.id, bookingId);
      const abandoned = await deliveryIn(delivery.id, ['abandoned']);
      await sleep(QUIET_MS);
      expect(r.requests).toHaveLength(6);
      expect(new Set(r.requests.map((q) => q.deliveryId))).toEqual(new Set([delivery.id]));
      expect(abandoned).toMatchObject({ attemptCount: 6, nextAttemptAt: null });
      const attempts = await attemptsOf(delivery.id);
      expect(attempts.map((a) => [a.attemptNumber, a.statusCode, a.succeeded, a.responseBody])).toEqual(
        [1, 2, 3, 4, 5, 6].map((n) => [n, 500, false, 'down']),
      );
      expect((await db().webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } })).status).toBe('abandoned');
      expect((await tenant.getEndpoint(endpoint.id)).body).toMatchObject({
        status: 'active',
        consecutive_failures: 6,
      });
    });

    it('when the receiver answers after WEBHOOK_TIMEOUT_MS, then the attempt fails as a timeout and the next attempt starts only after the previous one ended', async () => {
      const tenant = await newTenant();
      // 1.5 s, three times the 500 ms timeout; then prompt answers.
      const r = await receiver((q) => (q.index <= 2 ? { status: 200, body: 'late', delayMs: 1_500 } : answer.ok()));
      const endpoint = await tenant.createEndpoint(r.url, ['booking.created']);

      const bookingId = await tenant.book();

      const delivery = await deliveryFor(endpoint.id, bookingId);
      await deliveryIn(delivery.id, ['succeeded']);
      const attempts = await attemptsOf(delivery.id);
      expect(attempts).toHaveLength(3);
      for (const attempt of attempts.slice(0, 2)) {
        expect(attempt).toMatchObject({ statusCode: null, succeeded: false, responseBody: null });
        expect(attempt.error).toMatch(/timeout/i);
        expect(attempt.durationMs).toBeGreaterThanOrEqual(490);
        expect(attempt.durationMs).toBeLessThan(1_500);
      }
      expect(attempts[2]).toMatchObject({ statusCode: 200, succeeded: true });
      expect(r.requests.map((q) => q.deliveryId)).toEqual([delivery.id, delivery.id, delivery.id]);
      expect(r.overlapping).toEqual(new Set());
      // Each retry started after the previous attempt's deadline and the schedule's gap.
      const started = attempts.map((a) => a.startedAt.getTime());
      expect(started[1]! - started[0]!).toBeGreaterThanOrEqual(500 + 100 - 5);
      expect(started[2]! - started[1]!).toBeGreaterThanOrEqual(500 + 200 - 5);
    });

    it('when nothing listens at the endpoint, then a failed attempt with "connection refused" is recorded', async () => {
      const tenant = await newTenant();
      const port = await freePort();
      const endpoint = await tenant.createEndpoint(`http://127.0.0.1:${port}/webhooks`, ['booking.created']);

      const bookingId = await tenant.book();

      const delivery = await deliveryFor(endpoint.id, bookingId);
      const [first] = await waitUntil(
        async () => {
          const attempts = await attemptsOf(delivery.id);
          return attempts.length >= 2 && attempts;
        },
        { what: 'a failed attempt' },
      );
      expect(first).toMatchObject({
        attemptNumber: 1,
        statusCode: null,
        succeeded: false,
        responseBody: null,
        error: 'connection refused',
      });
      expect((await db().webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } })).status).not.toBe(
        'succeeded',
      );
      // Stop the retries: the port may be handed to a later test's receiver.
      await tenant.deleteEndpoint(endpoint.id).expect(204);
    });

    it('when the receiver answers 302, then the attempt fails and the redirect target gets nothing', async () => {
      const tenant = await newTenant();
      const target = await receiver();
      const redirector = await receiver((q) =>
        q.index <= 2 ? { status: 302, headers: { location: target.url }, body: '' } : answer.ok(),
      );
      const endpoint = await tenant.createEndpoint(redirector.url, ['booking.created']);

      const bookingId = await tenant.book();

      const delivery = await deliveryFor(endpoint.id, bookingId);
      await deliveryIn(delivery.id, ['succeeded']);
      const attempts = await attemptsOf(delivery.id);
      expect(attempts.map((a) => [a.statusCode, a.succeeded])).toEqual([
        [302, false],
        [302, false],
        [200, true],
      ]);
      expect(attempts[0]!.error).toMatch(/redirect/i);
      await sleep(QUIET_MS);
      expect(redirector.requests).toHaveLength(3);
      expect(target.requests).toEqual([]);
    });
  });

  describe('auto-disable', () => {
    it('when an endpoint fails 20 attempts in a row, then it is disabled, nothing more is sent, new deliveries wait, and resume sends them', async () => {
      const tenant = await newTenant();
      const r = await receiver(answer.status(500));
      const endpoint = await tenant.createEndpoint(r.url, ['booking.created']);

      // 5 deliveries of up to 6 attempts: 30 possible, so the 20th failure comes before any is abandoned.
      for (let i = 0; i < 5; i++) await tenant.book({ guests: 1 });

      const disabled = await waitUntil(
        async () => {
          const res = await tenant.getEndpoint(endpoint.id);
          return res.body.status === 'disabled' && res.body;
        },
        { timeoutMs: 15_000, what: 'the endpoint to be disabled' },
      );
      expect(disabled.consecutive_failures).toBeGreaterThanOrEqual(20);
      expect(disabled.disabled_at).toEqual(expect.any(String));
      await sleep(QUIET_MS);
      const sent = r.requests.length;
      // At most the attempts already in flight when the 20th failure was recorded get through.
      expect(sent).toBeGreaterThanOrEqual(20);
      expect(sent).toBeLessThanOrEqual(24);
      const before = await deliveriesOf(endpoint.id);
      expect(before).toHaveLength(5);
      expect(before.every((d) => d.status === 'waiting' || d.status === 'abandoned')).toBe(true);
      expect(before.some((d) => d.status === 'waiting')).toBe(true);
      expect(await db().webhookAttempt.count({ where: { delivery: { endpointId: endpoint.id } } })).toBe(sent);
      expect((await tenant.getEndpoint(endpoint.id)).body.consecutive_failures).toBe(sent);

      // A new event for the disabled endpoint waits.
      const later = await tenant.book({ guests: 1 });
      const laterDelivery = await deliveryFor(endpoint.id, later);
      expect(laterDelivery.status).toBe('waiting');
      await sleep(QUIET_MS);
      expect(r.requests).toHaveLength(sent);
      expect((await db().webhookDelivery.findUniqueOrThrow({ where: { id: laterDelivery.id } })).status).toBe(
        'waiting',
      );

      r.behave(answer.ok);
      const waiting = (await deliveriesOf(endpoint.id)).filter((d) => d.status === 'waiting').map((d) => d.id);
      const resumed = await tenant.resume(endpoint.id);

      expect(resumed.status).toBe(200);
      expect(resumed.body).toMatchObject({
        id: endpoint.id,
        status: 'active',
        consecutive_failures: 0,
        disabled_at: null,
        resumed_deliveries: waiting.length,
      });
      await r.waitFor((requests) => waiting.every((id) => requests.slice(sent).some((q) => q.deliveryId === id)));
      for (const id of waiting) await deliveryIn(id, ['succeeded']);
      await sleep(QUIET_MS);
      expect(
        r.requests
          .slice(sent)
          .map((q) => q.deliveryId)
          .sort(),
      ).toEqual([...waiting].sort());
      expect((await tenant.getEndpoint(endpoint.id)).body).toMatchObject({
        status: 'active',
        consecutive_failures: 0,
      });
    });

    it('when an endpoint fails 19 times and then succeeds, twice over, then it stays active with consecutive_failures 0', async () => {
      const tenant = await newTenant();
      const r = await receiver(answer.failFirst(19));
      const endpoint = await tenant.createEndpoint(r.url, ['booking.created']);

      const settle = async (bookingIds: string[]) => {
        const deliveries = await Promise.all(bookingIds.map((id) => deliveryFor(endpoint.id, id)));
        for (const d of deliveries) await deliveryIn(d.id, ['succeeded', 'abandoned']);
        await sleep(QUIET_MS);
        const settled = await db().webhookDelivery.findMany({ where: { id: { in: deliveries.map((d) => d.id) } } });
        expect(settled.map((d) => d.status)).toEqual(deliveries.map(() => 'succeeded'));
      };

      const first: string[] = [];
      for (let i = 0; i < 5; i++) first.push(await tenant.book({ guests: 1 }));
      await settle(first);

      const afterFirst = r.requests.length;
      const failuresFirst = r.requests.filter((q) => q.index <= 19).length;
      expect(failuresFirst).toBe(19);
      expect((await tenant.getEndpoint(endpoint.id)).body).toMatchObject({
        status: 'active',
        consecutive_failures: 0,
      });

      r.behave((q) => (q.index <= afterFirst + 19 ? { status: 500, body: 'again' } : answer.ok()));
      const second: string[] = [];
      for (let i = 0; i < 5; i++) second.push(await tenant.book({ guests: 1 }));
      await settle(second);

      // 38 failed attempts in all, never 20 in a row.
      const failed = await db().webhookAttempt.count({
        where: { succeeded: false, delivery: { endpointId: endpoint.id } },
      });
      expect(failed).toBe(38);
      expect((await tenant.getEndpoint(endpoint.id)).body).toMatchObject({
        status: 'active',
        consecutive_failures: 0,
        disabled_at: null,
      });
      expect((await deliveriesOf(endpoint.id)).map((d) => d.status)).not.toContain('waiting');
    });
  });

  describe('secret rotation, redelivery, recovery, deletion', () => {
    it('when the secret is rotated, then deliveries carry X-Service-Signature with the new secret and X-Service-Signature-Previous with the old one, each verifying', async () => {
      const tenant = await newTenant();
      const r = await receiver();
      const endpoint = await tenant.createEndpoint(r.url, ['booking.created']);
      const oldSecret = endpoint.signing_secret;

      await tenant.book();
      const [beforeRotation] = await r.waitForCount(1);
      expect(beforeRotation!.headers['x-service-signature-previous']).toBeUndefined();
      expect(verificationFailure(beforeRotation!.rawBody, beforeRotation!.headers, [oldSecret])).toBeNull();

      const rotated = await tenant.rotateSecret(endpoint.id);
      expect(rotated.status).toBe(200);
      const newSecret = rotated.body.signing_secret as string;
      expect(newSecret).toEqual(expect.any(String));
      expect(newSecret).not.toBe(oldSecret);
      const graceEnds = new Date(rotated.body.previous_secret_expires_at).getTime();
      expect(Math.abs(graceEnds - (Date.now() + 7 * 24 * 60 * 60 * 1000))).toBeLessThan(60_000);

      await tenant.book();
      const requests = await r.waitForCount(2);
      const after = requests[1]!;
      const current = String(after.headers['x-service-signature']);
      const previous = String(after.headers['x-service-signature-previous']);
      expect(current).toMatch(/^v1,[0-9a-f]{64}$/);
      expect(previous).toMatch(/^v1,[0-9a-f]{64}$/);
      expect(previous).not.toBe(current);
      // Both headers together verify with either secret.
      expect(verificationFailure(after.rawBody, after.headers, [newSecret])).toBeNull();
      expect(verificationFailure(after.rawBody, after.headers, [oldSecret])).toBeNull();
      // Each header on its own: the current one is the new secret's, the previous one the old secret's.
      const { 'x-service-signature-previous': _previous, ...onlyCurrent } = after.headers;
      const onlyPrevious = { ...onlyCurrent, 'x-service-signature': previous };
      expect(verificationFailure(after.rawBody, onlyCurrent, [newSecret])).toBeNull();
      expect(verificationFailure(after.rawBody, onlyCurrent, [oldSecret])).toBe('signature_mismatch');
      expect(verificationFailure(after.rawBody, onlyPrevious, [oldSecret])).toBeNull();
      expect(verificationFailure(after.rawBody, onlyPrevious, [newSecret])).toBe('signature_mismatch');
      expect((await tenant.getEndpoint(endpoint.id)).body).not.toHaveProperty('signing_secret');
    });

    it('when a redeliver is asked during the last attempt of a failing delivery, then that attempt starts the new schedule instead of abandoning it', async () => {
      const tenant = await newTenant();
      // Attempt 6 is answered 500 after 300 ms (within the 500 ms timeout): the redeliver lands
      // while it is in flight. Later attempts succeed.
      const r = await receiver((q) =>
        q.index <= 5 ? { status: 500 } : q.index === 6 ? { status: 500, delayMs: 300 } : answer.ok(),
      );
      const endpoint = await tenant.createEndpoint(r.url, ['booking.created']);
      const bookingId = await tenant.book();
      const delivery = await deliveryFor(endpoint.id, bookingId);
      await r.waitForCount(6);

      const res = await tenant.redeliver(delivery.id);

      expect(res.status).toBe(202);
      await sleep(QUIET_MS);
      const row = await db().webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } });
      expect(row.status).not.toBe('abandoned');
      await deliveryIn(delivery.id, ['succeeded'], 20_000);
      expect(r.of(delivery.id).length).toBeGreaterThanOrEqual(7);
    });

    it('when a receiver answers with a NUL byte in its body, then the attempt is recorded and the delivery settles once', async () => {
      const tenant = await newTenant();
      const r = await receiver(() => ({ status: 200, body: 'ok\u0000done' }));
      const endpoint = await tenant.createEndpoint(r.url, ['booking.created']);
      const bookingId = await tenant.book();
      const delivery = await deliveryFor(endpoint.id, bookingId);

      await deliveryIn(delivery.id, ['succeeded']);
      await sleep(QUIET_MS);

      expect(r.of(delivery.id)).toHaveLength(1);
      expect(await attemptsOf(delivery.id)).toMatchObject([
        { attemptNumber: 1, statusCode: 200, responseBody: 'ok\uFFFDdone' },
      ]);
    });

    it('when a succeeded delivery is redelivered, then it arrives again with the same delivery id and body', async () => {
      const tenant = await newTenant();
      const r = await receiver();
      const endpoint = await tenant.createEndpoint(r.url, ['booking.created']);
      const bookingId = await tenant.book();
      const delivery = await deliveryFor(endpoint.id, bookingId);
      await deliveryIn(delivery.id, ['succeeded']);
      await r.waitForCount(1);

      const res = await tenant.redeliver(delivery.id);

      expect(res.status).toBe(202);
      expect(res.body).toEqual({ delivery_id: delivery.id, status: 'pending' });
      const [first, second] = await r.waitForCount(2);
      expect(second!.deliveryId).toBe(delivery.id);
      expect(envelopeOf(second!)).toEqual(envelopeOf(first!));
      expect(verificationFailure(second!.rawBody, second!.headers, [endpoint.signing_secret])).toBeNull();
      await deliveryIn(delivery.id, ['succeeded']);
      await sleep(QUIET_MS);
      expect(r.requests).toHaveLength(2);
      const other = await newTenant();
      expect((await other.redeliver(delivery.id)).status).toBe(404);
    });

    it('when abandoned deliveries are recovered since a time, then those created since then are sent again and older ones are not', async () => {
      const tenant = await newTenant();
      const r = await receiver(answer.status(500));
      const endpoint = await tenant.createEndpoint(r.url, ['booking.created']);
      const older = await deliveryFor(endpoint.id, await tenant.book());
      // `since` must fall strictly between the two deliveries' creation times: let the clock move.
      await sleep(50);
      const since = new Date().toISOString();
      await sleep(50);
      const newer = await deliveryFor(endpoint.id, await tenant.book());
      await deliveryIn(older.id, ['abandoned']);
      await deliveryIn(newer.id, ['abandoned']);
      await sleep(QUIET_MS);
      expect(r.of(older.id)).toHaveLength(6);
      expect(r.of(newer.id)).toHaveLength(6);
      r.behave(answer.ok);

      const res = await tenant.recover(endpoint.id, since);

      expect(res.status).toBe(202);
      expect(res.body).toEqual({ recovered: 1 });
      await r.waitFor((requests) => requests.filter((q) => q.deliveryId === newer.id).length === 7);
      await deliveryIn(newer.id, ['succeeded']);
      await sleep(QUIET_MS);
      expect(r.of(newer.id)).toHaveLength(7);
      expect(r.of(older.id)).toHaveLength(6);
      expect(
        verificationFailure(r.of(newer.id)[6]!.rawBody, r.of(newer.id)[6]!.headers, [endpoint.signing_secret]),
      ).toBeNull();
      expect((await db().webhookDelivery.findUniqueOrThrow({ where: { id: older.id } })).status).toBe('abandoned');
    });

    it('when an endpoint is deleted, then its pending retry is not sent and later events make no delivery for it', async () => {
      const tenant = await newTenant();
      // The first attempt is answered 500 after 400 ms (within the 500 ms timeout): the endpoint is
      // deleted while it is in flight, so its retry is due only after the deletion.
      const r = await receiver((q) => (q.index === 1 ? { status: 500, delayMs: 400 } : answer.ok()));
      const endpoint = await tenant.createEndpoint(r.url, ['booking.created']);
      const bookingId = await tenant.book();
      await r.waitForCount(1);

      const res = await tenant.deleteEndpoint(endpoint.id);

      expect(res.status).toBe(204);
      const delivery = await deliveryFor(endpoint.id, bookingId);
      await deliveryIn(delivery.id, ['abandoned']);
      const later = await tenant.book({ confirmed: true });
      // customer.created + booking.created, then the same with gift_card.redeemed and booking.confirmed.
      await allRelayed(tenant.tenantId, 6);
      await sleep(QUIET_MS);
      expect(r.requests).toHaveLength(1);
      expect((await deliveriesOf(endpoint.id)).map((d) => d.eventName)).toEqual(['booking.created']);
      expect(await db().webhookDelivery.count({ where: { event: { entityId: later } } })).toBe(0);
      expect((await tenant.getEndpoint(endpoint.id)).status).toBe(404);
    });
  });

  describe('several dispatchers', () => {
    beforeAll(async () => {
      await h.startDispatcher();
    });

    it('when two dispatchers share the database and queue, then each event reaches each endpoint exactly once', async () => {
      const tenant = await newTenant();
      const first = await receiver();
      const second = await receiver();
      const endpoints = [await tenant.createEndpoint(first.url, []), await tenant.createEndpoint(second.url, [])];

      // 15 bookings paid by gift card: 4 events each (customer.created, booking.created,
      // gift_card.redeemed, booking.confirmed), 60 events, 120 deliveries.
      const bookings = await Promise.all(Array.from({ length: 15 }, () => tenant.book({ confirmed: true, guests: 1 })));

      const events = await allRelayed(tenant.tenantId, 60);
      await first.waitForCount(60);
      await second.waitForCount(60);
      await waitUntil(
        async () =>
          (await db().webhookDelivery.count({ where: { tenantId: tenant.tenantId, status: 'succeeded' } })) === 120,
        { what: '120 succeeded deliveries' },
      );
      await sleep(QUIET_MS);
      for (const [r, endpoint] of [
        [first, endpoints[0]!],
        [second, endpoints[1]!],
      ] as const) {
        expect(r.requests).toHaveLength(60);
        expect([...r.countsByDelivery().values()]).toEqual(Array(60).fill(1));
        expect(r.requests.map((q) => String(envelopeOf(q).data.event_id)).sort()).toEqual(
          events.map((e) => e.id).sort(),
        );
        const deliveries = await deliveriesOf(endpoint.id);
        expect(deliveries.map((d) => d.id).sort()).toEqual([...r.countsByDelivery().keys()].sort());
        expect(deliveries.every((d) => d.attemptCount === 1)).toBe(true);
      }
      expect(new Set(bookings).size).toBe(15);
    });

    it('when two dispatchers share a slow receiver, then no delivery ever has two attempts in flight and each runs its schedule once', async () => {
      const tenant = await newTenant();
      const r = await receiver();
      // The first two attempts of every delivery are answered after 1.5 s, past the 500 ms timeout.
      r.behave((q) => (r.of(q.deliveryId).length <= 2 ? { status: 200, body: 'late', delayMs: 1_500 } : answer.ok()));
      const endpoint = await tenant.createEndpoint(r.url, ['booking.created']);

      const bookings = await Promise.all(Array.from({ length: 6 }, () => tenant.book({ guests: 2 })));

      const deliveries = await Promise.all(bookings.map((id) => deliveryFor(endpoint.id, id)));
      for (const d of deliveries) await deliveryIn(d.id, ['succeeded']);
      await sleep(QUIET_MS);
      expect(r.overlapping).toEqual(new Set());
      for (const d of deliveries) {
        expect(r.of(d.id)).toHaveLength(3);
        const attempts = await attemptsOf(d.id);
        expect(attempts.map((a) => [a.attemptNumber, a.succeeded])).toEqual([
          [1, false],
          [2, false],
          [3, true],
        ]);
        // Each retry waits out its step after the failure (the 500 ms timeout), by the clock of
        // the attempts' own start: the receiver's arrival times would add each request's connect
        // and send time, which a busy machine stretches by tens of milliseconds.
        const started = attempts.map((a) => a.startedAt.getTime());
        expect(started[1]! - started[0]!).toBeGreaterThanOrEqual(500 + 100 - 5);
        expect(started[2]! - started[1]!).toBeGreaterThanOrEqual(500 + 200 - 5);
      }
    });
  });
});

describe('webhook delivery with private addresses refused (WEBHOOK_ALLOW_PRIVATE_URLS=false)', () => {
  let h: WebhookHarness;
  let tenant: DemoTenant;

  beforeAll(async () => {
    h = await startHarness({ WEBHOOK_ALLOW_PRIVATE_URLS: 'false' });
    tenant = await seedTenant(h.t.deps);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('when endpoints point at loopback, then every attempt fails with a scheme or address refusal and the receiver gets nothing', async () => {
    const r = await receiver();
    const client = new TenantClient(h.t, tenant);
    const refused = await client.createEndpoint(r.url).catch((error: Error) => error.message);
    expect(refused).toMatch(/^endpoint not created: 400 .*invalid_webhook_url/);
    // The API refuses such URLs, so the rows are written directly, as an old or tampered row would be.
    const insert = (url: string) =>
      h.t.deps.db.webhookEndpoint.create({
        data: {
          id: randomUUID(),
          tenantId: tenant.tenant.id,
          url,
          events: [],
          secretCiphertext: sealSecret(h.t.deps.config.webhooks.secretKey, generateWebhookSecret()),
        },
      });
    const plainHttp = await insert(r.url);
    const literal = await insert(`https://127.0.0.1:${r.port}/webhooks`);
    const named = await insert(`https://localhost:${r.port}/webhooks`);

    const bookingId = await client.book();

    const errorsOf = async (endpointId: string) => {
      const delivery = await waitUntil(
        () => h.t.deps.db.webhookDelivery.findFirst({ where: { endpointId, event: { entityId: bookingId } } }),
        { what: 'the delivery' },
      );
      await waitUntil(
        async () =>
          (await h.t.deps.db.webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } })).status === 'abandoned',
        { what: 'the delivery to be abandoned' },
      );
      const attempts = await h.t.deps.db.webhookAttempt.findMany({ where: { deliveryId: delivery.id } });
      expect(attempts).toHaveLength(6);
      expect(attempts.every((a) => !a.succeeded && a.statusCode === null)).toBe(true);
      return [...new Set(attempts.map((a) => a.error))];
    };
    expect(await errorsOf(plainHttp.id)).toEqual(['scheme not allowed: http: (https required)']);
    expect(await errorsOf(literal.id)).toEqual(['address not allowed: 127.0.0.1 (loopback)']);
    const namedErrors = await errorsOf(named.id);
    expect(namedErrors).toHaveLength(1);
    expect(namedErrors[0]).toMatch(/^address not allowed: (127\.0\.0\.1|::1) \(loopback\)$/);
    await sleep(QUIET_MS);
    expect(r.requests).toEqual([]);
  });
});

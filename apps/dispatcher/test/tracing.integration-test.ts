import path from 'node:path';
import type { DemoTenant } from '@booking/db';
import { generateWebhookSecret, sealSecret } from '@booking/signing';
import {
  WebhookReceiver,
  bookingBody,
  clientIp,
  createIsolatedDatabase,
  createTestApp,
  freePort,
  kayak,
  killAllServiceProcesses,
  seedTenant,
  startServiceProcess,
  waitUntil,
  type TestApp,
} from '@booking/test-kit';
import { startDispatcherProcess } from './support/crash-dispatcher';
import { OtlpCollector, type CollectedSpan } from './support/otlp-collector';
import { WEBHOOK_TEST_ENV } from './support/webhook-harness';

// Traces across processes: an API, a dispatcher and a lifecycle worker run as OS processes with
// OTEL_EXPORTER_OTLP_ENDPOINT pointing at a collector of the test's own on 127.0.0.1. A booking
// made through the API must reach its receiver in the same trace: the outbox row carries the
// request's context, and the delivery attempt's span continues it.

const SECRET_KEY = 'tracing-test-key-that-seals-webhook-signing-secrets';
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;
const KIND = { server: 2, client: 3, producer: 4, consumer: 5 };

describe('tracing across the API, the outbox, the dispatcher and the lifecycle worker', () => {
  let collector: OtlpCollector;
  let receiver: WebhookReceiver;
  let isolated: Awaited<ReturnType<typeof createIsolatedDatabase>>;
  let t: TestApp;
  let demo: DemoTenant;
  let apiPort: number;
  let secret: string;

  beforeAll(async () => {
    collector = await OtlpCollector.start();
    receiver = await WebhookReceiver.start();
    isolated = await createIsolatedDatabase();
    const env: Record<string, string> = {
      ...WEBHOOK_TEST_ENV,
      ...isolated.env,
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      WEBHOOK_SECRET_KEY: SECRET_KEY,
      TRUST_PROXY: '1',
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      // Spans reach the collector within a tenth of a second instead of five.
      OTEL_BSP_SCHEDULE_DELAY: '100',
      // A lifecycle tick every second, so the worker has a run to trace soon.
      UNPAID_BOOKING_SWEEP_SECONDS: '1',
    };
    t = createTestApp(isolated.env);
    demo = await seedTenant(t.deps);
    secret = generateWebhookSecret();
    await t.deps.db.webhookEndpoint.create({
      data: {
        tenantId: demo.tenant.id,
        url: receiver.url,
        events: ['booking.created'],
        secretCiphertext: sealSecret(SECRET_KEY, secret),
      },
    });
    apiPort = await freePort();
    const workerPort = await freePort();
    await Promise.all([
      startServiceProcess({
        name: 'traced api',
        entry: path.join('apps', 'api', 'src', 'main.ts'),
        env: { ...env, PORT: String(apiPort), API_METRICS_PORT: String(await freePort()) },
        readyUrl: `http://127.0.0.1:${apiPort}/healthz`,
      }),
      startDispatcherProcess('traced', env),
      startServiceProcess({
        name: 'traced worker',
        entry: path.join('apps', 'api', 'src', 'jobs', 'worker-main.ts'),
        env: { ...env, WORKER_HEALTH_PORT: String(workerPort) },
        readyUrl: `http://127.0.0.1:${workerPort}/healthz`,
      }),
    ]);
  }, 90_000);

  afterAll(async () => {
    await killAllServiceProcesses();
    await Promise.allSettled([collector?.close(), receiver?.close(), t?.close()]);
    await isolated?.drop();
  });

  async function post(
    route: string,
    ip: string,
    body: object,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: Record<string, string> }> {
    const res = await fetch(`http://127.0.0.1:${apiPort}${route}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': ip, ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    return { status: res.status, body: (await res.json()) as Record<string, string> };
  }

  const spanOf = (what: string, match: (span: CollectedSpan) => boolean) =>
    waitUntil(() => collector.spans.find(match), { timeoutMs: 15_000, intervalMs: 50, what });

  it('when a booking is made, then its outbox row, the relay, the delivery attempt and the receiver carry the request trace', async () => {
    const { experience, slot } = kayak(demo);
    const ip = clientIp();
    const hold = await post('/api/bookings/hold', ip, { slot_id: slot.id, experience_id: experience.id, seats: 2 });
    expect(hold.status).toBe(200);
    const body = bookingBody(demo, experience, slot.id, hold.body.hold_id!, 2);
    const booking = await post('/api/bookings', ip, body);
    expect(booking.status).toBe(201);
    const bookingId = booking.body.booking_id!;

    // The outbox row stored the context of the request that recorded it.
    const event = await t.deps.db.event.findFirstOrThrow({ where: { entityId: bookingId, name: 'booking.created' } });
    const [, traceId, recordingSpanId] = TRACEPARENT.exec(event.traceparent ?? '') ?? [];
    expect(traceId).toBeDefined();

    // The request's spans: the server span of POST /api/bookings, and its PostgreSQL and Redis calls.
    const server = await spanOf(
      'the booking request span',
      (span) => span.traceId === traceId && span.kind === KIND.server,
    );
    expect(server).toMatchObject({ service: 'booking-api', attributes: { 'http.route': '/api/bookings' } });
    await spanOf(
      'the span that recorded the event',
      (span) => span.spanId === recordingSpanId && span.traceId === traceId,
    );
    await spanOf(
      'a PostgreSQL span of the request',
      (s) => s.traceId === traceId && s.attributes['db.system.name'] === 'postgresql',
    );
    await spanOf(
      'a Redis span of the request',
      (s) => s.traceId === traceId && s.attributes['db.system.name'] === 'redis',
    );

    // The relay's batch links to it; the attempt continues it as a child of the recording span.
    await spanOf(
      'the relay span linking the booking trace',
      (span) => span.name === 'outbox relay' && span.links.some((link) => link.traceId === traceId),
    );
    const deliver = await spanOf(
      'the delivery attempt span',
      (span) => span.name === 'webhook deliver' && span.traceId === traceId,
    );
    expect(deliver).toMatchObject({
      service: 'booking-dispatcher',
      kind: KIND.consumer,
      parentSpanId: recordingSpanId,
      attributes: {
        'webhook.event': 'booking.created',
        'webhook.outcome': 'succeeded',
        'http.response.status_code': 200,
      },
    });
    // Its HTTP request is its child, recorded with the receiver's origin only (a URL may hold a credential).
    const request = await spanOf(
      'the attempt HTTP span',
      (span) => span.parentSpanId === deliver.spanId && span.kind === KIND.client,
    );
    expect(request.attributes['url.full']).toBe(`http://127.0.0.1:${receiver.port}`);

    // The receiver got the trace context with the delivery, so it can carry the trace on.
    const [received] = await receiver.waitFor((requests) =>
      requests.some((r) => r.deliveryId === deliver.attributes['webhook.delivery_id']),
    );
    const delivered = receiver.of(String(deliver.attributes['webhook.delivery_id']))[0] ?? received!;
    expect(String(delivered.headers.traceparent)).toMatch(new RegExp(`^00-${traceId}-${request.spanId}-01$`));

    // Nothing secret or personal was exported: not the signing secret, not the signature, not the guest's email.
    await waitUntil(() => collector.rawBodies.length > 0, { what: 'an export' });
    const exported = collector.rawBodies.join('\n');
    expect(exported).not.toContain(secret);
    expect(exported).not.toContain(String(delivered.headers['x-service-signature']));
    expect(exported).not.toContain(body.customer.email);
  }, 60_000);

  it("when a client sends its own trace context, then the API starts the trace itself and stores none of the client's", async () => {
    const { experience, slot } = kayak(demo);
    const ip = clientIp();
    const clientTraceId = 'abcdef0123456789abcdef0123456789';
    const theirs = { traceparent: `00-${clientTraceId}-0123456789abcdef-01`, tracestate: 'guest=anything-i-like' };
    const hold = await post('/api/bookings/hold', ip, { slot_id: slot.id, experience_id: experience.id, seats: 1 });
    expect(hold.status).toBe(200);
    const booking = await post(
      '/api/bookings',
      ip,
      bookingBody(demo, experience, slot.id, hold.body.hold_id!, 1),
      theirs,
    );
    expect(booking.status).toBe(201);

    const event = await t.deps.db.event.findFirstOrThrow({
      where: { entityId: booking.body.booking_id!, name: 'booking.created' },
    });
    const [, traceId] = TRACEPARENT.exec(event.traceparent ?? '') ?? [];
    expect(traceId).toBeDefined();
    expect(traceId).not.toBe(clientTraceId);
    expect(event.tracestate).toBeNull();
    const server = await spanOf(
      'the booking request span',
      (span) => span.traceId === traceId && span.kind === KIND.server,
    );
    expect(server.parentSpanId).toBe('');
    expect(collector.spans.some((span) => span.traceId === clientTraceId)).toBe(false);
  }, 60_000);

  it('when a booking takes the transaction path (paid by gift card), then the events recordEvent writes carry the request trace too', async () => {
    const { experience, slot } = kayak(demo);
    const ip = clientIp();
    const hold = await post('/api/bookings/hold', ip, { slot_id: slot.id, experience_id: experience.id, seats: 1 });
    const paid = await post('/api/bookings', ip, {
      ...bookingBody(demo, experience, slot.id, hold.body.hold_id!, 1),
      gift_card_code: demo.gift_cards[0]!.code,
    });
    expect(paid).toMatchObject({ status: 201, body: { status: 'confirmed' } });

    const events = await t.deps.db.event.findMany({ where: { entityId: paid.body.booking_id } });
    expect(events.map((event) => event.name)).toEqual(expect.arrayContaining(['booking.created', 'booking.confirmed']));
    const traceIds = new Set(events.map((event) => TRACEPARENT.exec(event.traceparent ?? '')?.[1]));
    expect(traceIds.size).toBe(1);
    const [traceId] = [...traceIds];
    expect(traceId).toBeDefined();
    const server = await spanOf(
      'the paid booking request span',
      (span) => span.traceId === traceId && span.kind === KIND.server,
    );
    expect(server.attributes['http.route']).toBe('/api/bookings');
  }, 30_000);

  it('when the lifecycle worker runs a job, then the run is a span with its queries as children', async () => {
    const isRun = (span: CollectedSpan) =>
      span.service === 'booking-worker' && span.name === 'job expire-unpaid-bookings';
    const run = await spanOf('a lifecycle job span', isRun);
    expect(run).toMatchObject({ kind: KIND.consumer, attributes: { 'job.name': 'expire-unpaid-bookings' } });
    // A run of the job, not necessarily the first one seen: any run may be skipped without a
    // query (a round still running), and a loaded machine can make the first one such a run.
    const runs = () => new Set(collector.spans.filter(isRun).map((span) => span.traceId));
    await spanOf(
      'a query in a run of the job',
      (span) => span.attributes['db.system.name'] === 'postgresql' && runs().has(span.traceId),
    );
  }, 30_000);

  it('when a probe asks the API for its health, then no span is made of it', async () => {
    const before = collector.ofService('booking-api').length;
    for (let i = 0; i < 5; i++) expect((await fetch(`http://127.0.0.1:${apiPort}/healthz`)).status).toBe(200);
    // A traced request of the same process after the probes: once its span is in, the probes' would be too.
    const marker = await fetch(
      `http://127.0.0.1:${apiPort}/api/widget/experience?tenant=${demo.tenant.slug}&experience=nope`,
    );
    expect(marker.status).toBeGreaterThanOrEqual(400);
    await spanOf(
      'the marker request span',
      (span) =>
        span.service === 'booking-api' &&
        span.kind === KIND.server &&
        span.attributes['url.path'] === '/api/widget/experience',
    );
    const probes = collector
      .ofService('booking-api')
      .slice(before)
      .filter((span) => span.attributes['url.path'] === '/healthz');
    expect(probes).toEqual([]);
  }, 30_000);
});

import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import path from 'node:path';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPgPool, type DemoTenant } from '@booking/db';
import { createLogger } from '@booking/logging';
import { serveMetrics } from '@booking/metrics';
import {
  bearer,
  clientIp,
  confirmedBooking,
  createIsolatedDatabase,
  createTestApp,
  freePort,
  heldBooking,
  kayak,
  killAllServiceProcesses,
  metricValue,
  scrapeMetrics,
  seedTenant,
  sleep,
  startServiceProcess,
  type TestApp,
} from '@booking/test-kit';
import request from 'supertest';
import { createApiMetrics } from '../src/metrics/api-metrics';

// The API's /metrics as Prometheus scrapes it, after driving the outcomes it counts through the
// real app. A database of its own, so the outbox holds only this file's events.

const HOLDS_PER_MINUTE = 3;

describe('API metrics', () => {
  let isolated: Awaited<ReturnType<typeof createIsolatedDatabase>>;
  let t: TestApp;
  let demo: DemoTenant;
  let server: Server;
  let port: number;

  beforeAll(async () => {
    isolated = await createIsolatedDatabase();
    t = createTestApp({ ...isolated.env, RATE_LIMIT_HOLDS_PER_MINUTE: String(HOLDS_PER_MINUTE) });
    demo = await seedTenant(t.deps);
    server = serveMetrics(createApiMetrics(t.deps), {
      port: 0,
      logger: createLogger('silent', 'api-metrics-test'),
      portSetting: 'API_METRICS_PORT',
    });
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await killAllServiceProcesses();
    server?.close();
    await t?.close();
    await isolated?.drop();
  });

  /** What moved between two scrapes. */
  async function delta(act: () => Promise<void>) {
    const before = await scrapeMetrics(port);
    await act();
    const after = await scrapeMetrics(port);
    return (name: string, labels: Record<string, string> = {}) =>
      (metricValue(after, name, labels) ?? 0) - (metricValue(before, name, labels) ?? 0);
  }

  const holdBody = (seats = 1) => {
    const { experience, slot } = kayak(demo);
    return { slot_id: slot.id, experience_id: experience.id, seats };
  };
  const postHold = (ip: string, body: object, key?: string) => {
    const req = request(t.app).post('/api/bookings/hold').set('X-Forwarded-For', ip);
    return (key ? req.set('Idempotency-Key', key) : req).send(body);
  };
  const requests = (route: string, status: string, method = 'POST') => ({ method, route, status });

  test('when holds are placed, refused and replayed, then each outcome is counted once, by route template', async () => {
    const key = randomUUID();
    const ip = clientIp(); // a key belongs to its client
    const moved = await delta(async () => {
      expect((await postHold(ip, holdBody(), key)).status).toBe(200);
      const replay = await postHold(ip, holdBody(), key);
      expect(replay.status).toBe(200);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      const unknownSlot = await postHold(clientIp(), { ...holdBody(), slot_id: randomUUID() });
      expect(unknownSlot.body.error).toBe('slot_not_found');
      const tooMany = await postHold(clientIp(), holdBody(13));
      expect(tooMany.body.error).toBe('invalid_guest_count');
    });
    expect(moved('holds_placed_total')).toBe(1);
    expect(moved('holds_refused_total', { reason: 'slot_not_found' })).toBe(1);
    expect(moved('holds_refused_total', { reason: 'party_size' })).toBe(1);
    expect(moved('holds_refused_total', { reason: 'full' })).toBe(0);
    expect(moved('idempotent_replays_total', { route: '/api/bookings/hold' })).toBe(1);
    expect(moved('http_request_duration_seconds_count', requests('/api/bookings/hold', '200'))).toBe(2);
    expect(moved('http_request_duration_seconds_count', requests('/api/bookings/hold', '404'))).toBe(1);
    expect(moved('http_request_duration_seconds_count', requests('/api/bookings/hold', '400'))).toBe(1);
  });

  test('when a client runs out of its hold budget, then its 429 is counted by limiter', async () => {
    const ip = clientIp();
    const moved = await delta(async () => {
      for (let i = 0; i < HOLDS_PER_MINUTE; i++) expect((await postHold(ip, holdBody())).status).toBe(200);
      expect((await postHold(ip, holdBody())).status).toBe(429);
    });
    expect(moved('rate_limited_requests_total', { limiter: 'holds' })).toBe(1);
    expect(moved('rate_limited_requests_total', { limiter: 'bookings' })).toBe(0);
    expect(moved('http_request_duration_seconds_count', requests('/api/bookings/hold', '429'))).toBe(1);
  });

  test('when bookings are made, then creations count by status and confirmations by payment method', async () => {
    const moved = await delta(async () => {
      await heldBooking(t, demo);
      await confirmedBooking(t, demo);
    });
    expect(moved('bookings_created_total', { status: 'held' })).toBe(1);
    expect(moved('bookings_created_total', { status: 'confirmed' })).toBe(1);
    expect(moved('bookings_confirmed_total', { method: 'gift_card' })).toBe(1);
    expect(moved('bookings_confirmed_total')).toBe(1);
    expect(moved('http_request_duration_seconds_count', requests('/api/bookings', '201'))).toBe(2);
  });

  test('when a route takes a parameter, then the label is its template; unknown paths share one label', async () => {
    const booking = await heldBooking(t, demo);
    const unknown = `/no-such-route/${randomUUID()}`;
    const moved = await delta(async () => {
      const read = await request(t.app)
        .get(`/api/bookings/${booking.booking_id}`)
        .set('Authorization', bearer(demo.api_keys.staff));
      expect(read.status).toBe(200);
      expect((await request(t.app).get(unknown)).status).toBe(404);
    });
    expect(moved('http_request_duration_seconds_count', requests('/api/bookings/:id', '200', 'GET'))).toBe(1);
    expect(moved('http_request_duration_seconds_count', requests('unmatched', '404', 'GET'))).toBe(1);
    const text = await scrapeMetrics(port);
    expect(text).not.toContain(booking.booking_id);
    expect(text).not.toContain(unknown);
  });

  test('when an event waits in the outbox, then outbox_lag_seconds reads its age, and 0 once it is relayed', async () => {
    const relayAll = () => t.deps.pool.query('UPDATE events SET relayed_at = now() WHERE relayed_at IS NULL');
    await relayAll();
    expect(metricValue(await scrapeMetrics(port), 'outbox_lag_seconds')).toBe(0);

    const before = Date.now();
    await heldBooking(t, demo); // records booking.created, unrelayed: no dispatcher runs here
    await sleep(1_500);
    const lag = metricValue(await scrapeMetrics(port), 'outbox_lag_seconds')!;
    expect(lag).toBeGreaterThanOrEqual(1.4);
    expect(lag).toBeLessThanOrEqual((Date.now() - before) / 1000 + 0.1);

    await relayAll();
    expect(metricValue(await scrapeMetrics(port), 'outbox_lag_seconds')).toBe(0);
  });

  test('when scraped, then PostgreSQL pool, Redis and process health are there', async () => {
    await request(t.app).get('/readyz').expect(200);
    const text = await scrapeMetrics(port);
    expect(metricValue(text, 'db_pool_max_connections')).toBe(t.deps.config.dbPoolSize);
    expect(metricValue(text, 'db_pool_connections')).toBeGreaterThanOrEqual(1);
    expect(metricValue(text, 'db_pool_waiting_requests')).toBe(0);
    expect(metricValue(text, 'redis_connection_up', { connection: 'commands' })).toBe(1);
    expect(metricValue(text, 'redis_connection_errors_total', { connection: 'commands' })).toBe(0);
    expect(metricValue(text, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
  });

  test('when the API runs as its own process, then /metrics is served on API_METRICS_PORT and not on the public port', async () => {
    const [apiPort, metricsPort] = [await freePort(), await freePort()];
    const api = await startServiceProcess({
      name: 'api',
      entry: path.join('apps', 'api', 'src', 'main.ts'),
      env: { ...isolated.env, PORT: String(apiPort), API_METRICS_PORT: String(metricsPort) },
      readyUrl: `http://127.0.0.1:${apiPort}/healthz`,
    });
    expect((await fetch(`http://127.0.0.1:${apiPort}/readyz`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${apiPort}/metrics`)).status).toBe(404);

    const text = await scrapeMetrics(metricsPort);
    expect(metricValue(text, 'http_request_duration_seconds_count', requests('/readyz', '200', 'GET'))).toBe(1);
    expect(metricValue(text, 'http_request_duration_seconds_count', requests('unmatched', '404', 'GET'))).toBe(1);
    expect(metricValue(text, 'outbox_lag_seconds')).toBeGreaterThanOrEqual(0);
    expect((await fetch(`http://127.0.0.1:${metricsPort}/healthz`)).status).toBe(200);
    await api.stop();
    expect(await api.exited).toBe('exit 0');
  }, 90_000);

  test('when PostgreSQL refuses connections, then a scrape still answers at once, the outbox lag unknown (NaN)', async () => {
    const refused = new URL(isolated.env.DATABASE_URL!);
    refused.port = String(await freePort());
    const pool = createPgPool(refused.toString(), { connectTimeoutMs: 1_000 });
    try {
      const registry = createApiMetrics({ pool, redis: t.deps.redis, queueRedis: t.deps.queueRedis });
      const started = Date.now();
      const text = await registry.metrics();
      expect(Date.now() - started).toBeLessThan(1_500);
      expect(metricValue(text, 'outbox_lag_seconds')).toBeNaN();
      expect(metricValue(text, 'db_pool_connections', { state: 'in_use' })).toBe(0);
      expect(metricValue(text, 'redis_connection_up', { connection: 'commands' })).toBe(1);
      expect(metricValue(text, 'holds_placed_total')).toBeGreaterThanOrEqual(1);
    } finally {
      await pool.end();
    }
  });
});

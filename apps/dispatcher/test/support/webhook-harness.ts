import { loadConfig } from '@booking/config';
import type { DemoTenant } from '@booking/db';
import { createBooking, createIsolatedDatabase, createTestApp, type TestApp } from '@booking/test-kit';
import pino from 'pino';
import request from 'supertest';
import { startDispatcher, type Dispatcher } from '../../src/dispatcher';

/**
 * Settings for webhook tests: loopback http receivers allowed, a 6-attempt retry schedule in
 * hundreds of milliseconds instead of hours, a short attempt timeout and a fast relay poll.
 */
export const WEBHOOK_TEST_ENV: Record<string, string> = {
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  WEBHOOK_RETRY_DELAYS_MS: '0,100,200,300,400,500',
  WEBHOOK_TIMEOUT_MS: '500',
  WEBHOOK_RELAY_INTERVAL_MS: '100',
  // Every booking comes from its own client address anyway; this only rules out a collision.
  RATE_LIMIT_HOLDS_PER_MINUTE: '10000',
  RATE_LIMIT_BOOKINGS_PER_MINUTE: '10000',
  LOG_LEVEL: 'silent',
};

/** The schedule of WEBHOOK_TEST_ENV, as numbers. */
export const TEST_RETRY_DELAYS_MS = WEBHOOK_TEST_ENV.WEBHOOK_RETRY_DELAYS_MS!.split(',').map(Number);

export interface WebhookHarness {
  env: Record<string, string>;
  /** The API in-process, on the harness's own database and queue prefix. */
  t: TestApp;
  /** The dispatcher the harness started with. */
  dispatcher: Dispatcher;
  /** Starts one more dispatcher on the same database and queue; all are stopped by close(). */
  startDispatcher(): Promise<Dispatcher>;
  close(): Promise<void>;
}

/**
 * An isolated database and queue prefix, the API on them, and one in-process dispatcher. The
 * dispatcher's relay takes every event of its database and its workers every job of its queue,
 * so each test file (or describe) that runs one needs a harness of its own.
 */
export async function startHarness(overrides: Record<string, string> = {}): Promise<WebhookHarness> {
  const isolated = await createIsolatedDatabase();
  const env = { ...WEBHOOK_TEST_ENV, ...isolated.env, ...overrides };
  const t = createTestApp(env);
  const dispatchers: Dispatcher[] = [];
  const start = async () => {
    const dispatcher = await startDispatcher(loadConfig({ ...process.env, ...env }), pino({ level: 'silent' }), {
      metrics: false,
    });
    dispatchers.push(dispatcher);
    return dispatcher;
  };
  let dispatcher: Dispatcher;
  try {
    dispatcher = await start();
  } catch (error) {
    await t.close();
    await isolated.drop();
    throw error;
  }
  return {
    env,
    t,
    dispatcher,
    startDispatcher: start,
    async close() {
      await Promise.allSettled(dispatchers.splice(0).map((d) => d.stop()));
      await t.close();
      await isolated.drop();
    },
  };
}

export interface CreatedEndpoint {
  id: string;
  url: string;
  events: string[];
  status: 'active' | 'disabled';
  consecutive_failures: number;
  created_at: string;
  signing_secret: string;
}

/** One tenant seen through the API: its webhook settings (admin key) and its bookings. */
export class TenantClient {
  private bookings = 0;

  constructor(
    readonly t: TestApp,
    readonly demo: DemoTenant,
  ) {}

  get tenantId(): string {
    return this.demo.tenant.id;
  }

  private get admin() {
    return `Bearer ${this.demo.api_keys.admin}`;
  }

  /** POST /api/webhooks/endpoints; `events` left out of the body when undefined. */
  async createEndpoint(url: string, events?: string[]): Promise<CreatedEndpoint> {
    const res = await request(this.t.app)
      .post('/api/webhooks/endpoints')
      .set('Authorization', this.admin)
      .send(events === undefined ? { url } : { url, events });
    if (res.status !== 201) throw new Error(`endpoint not created: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as CreatedEndpoint;
  }

  getEndpoint(id: string) {
    return request(this.t.app).get(`/api/webhooks/endpoints/${id}`).set('Authorization', this.admin);
  }

  deleteEndpoint(id: string) {
    return request(this.t.app).delete(`/api/webhooks/endpoints/${id}`).set('Authorization', this.admin);
  }

  rotateSecret(id: string) {
    return request(this.t.app).post(`/api/webhooks/endpoints/${id}/rotate-secret`).set('Authorization', this.admin);
  }

  resume(id: string) {
    return request(this.t.app).post(`/api/webhooks/endpoints/${id}/resume`).set('Authorization', this.admin);
  }

  sendTest(id: string, body: object = {}) {
    return request(this.t.app).post(`/api/webhooks/endpoints/${id}/test`).set('Authorization', this.admin).send(body);
  }

  recover(id: string, since: string) {
    return request(this.t.app)
      .post(`/api/webhooks/endpoints/${id}/recover`)
      .set('Authorization', this.admin)
      .send({ since });
  }

  redeliver(deliveryId: string) {
    return request(this.t.app)
      .post(`/api/webhooks/deliveries/${deliveryId}/redeliver`)
      .set('Authorization', this.admin);
  }

  deliveries(endpointId: string) {
    return request(this.t.app)
      .get(`/api/webhooks/endpoints/${endpointId}/deliveries?limit=100`)
      .set('Authorization', this.admin);
  }

  /**
   * Hold + POST /api/bookings: records booking.created; with `confirmed`, the seed's big gift
   * card covers the total, which also records booking.confirmed. Spreads bookings over the
   * bookable slots of both experiences so capacity never runs out.
   */
  async book(options: { confirmed?: boolean; guests?: number } = {}): Promise<string> {
    const index = this.bookings++;
    const experience = this.demo.experiences[index % 2]!;
    const guests = Math.min(Math.max(options.guests ?? 2, experience.min_party_size), experience.max_party_size);
    const booked = await createBooking(this.t, this.demo, {
      experience,
      slotIndex: Math.floor(index / 2) % 6,
      guests,
      ...(options.confirmed && { giftCardCode: this.demo.gift_cards[0]!.code }),
    });
    const expected = options.confirmed ? 'confirmed' : 'held';
    if (booked.status !== expected) throw new Error(`booking is ${booked.status}, expected ${expected}`);
    return booked.booking_id;
  }

  async cancel(bookingId: string): Promise<void> {
    const res = await request(this.t.app)
      .post(`/api/bookings/${bookingId}/cancel`)
      .set('Authorization', `Bearer ${this.demo.api_keys.manager}`);
    if (res.status !== 200) throw new Error(`cancel failed: ${res.status} ${JSON.stringify(res.body)}`);
  }

  async checkIn(bookingId: string): Promise<void> {
    const res = await request(this.t.app)
      .post(`/api/bookings/${bookingId}/check-in`)
      .set('Authorization', `Bearer ${this.demo.api_keys.staff}`);
    if (res.status !== 200) throw new Error(`check-in failed: ${res.status} ${JSON.stringify(res.body)}`);
  }
}

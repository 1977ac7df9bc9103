import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import { endpointWants } from '@booking/events';
import { generateApiKey, openSecret } from '@booking/signing';
import { bearer, createIsolatedDatabase, createTestApp, seedTenant, waitUntil, type TestApp } from '@booking/test-kit';

// No dispatcher runs here: these tests check what the API answers and what it writes to
// PostgreSQL and to the BullMQ delivery queue. The database and the queue prefix are this file's
// own, so nothing else consumes the jobs queued here.

const DAY_MS = 24 * 60 * 60 * 1000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const RECEIVER = 'https://hooks.example.com/booking';

type DeliveryStatus = 'pending' | 'succeeded' | 'waiting' | 'abandoned';

describe('webhook endpoints API', () => {
  let isolated: Awaited<ReturnType<typeof createIsolatedDatabase>>;
  let t: TestApp;
  let demo: DemoTenant;
  let other: DemoTenant;
  /** An admin key of `demo` without the webhooks:write scope. */
  let readOnlyAdmin: string;

  beforeAll(async () => {
    isolated = await createIsolatedDatabase();
    t = createTestApp({ ...isolated.env, WEBHOOK_ALLOW_PRIVATE_URLS: 'false' });
    [demo, other] = await Promise.all([seedTenant(t.deps), seedTenant(t.deps)]);
    const key = generateApiKey();
    await t.deps.db.apiKey.create({
      data: {
        tenantId: demo.tenant.id,
        name: 'Admin key without webhooks:write',
        prefix: key.prefix,
        secretHash: key.secretHash,
        role: 'admin',
        scopes: [],
      },
    });
    readOnlyAdmin = key.token;
  }, 120_000);

  afterAll(async () => {
    if (t) {
      await t.deps.deliveryQueue.obliterate({ force: true }).catch(() => undefined);
      await t.close();
    }
    await isolated?.drop();
  }, 60_000);

  const secretKey = () => t.deps.config.webhooks.secretKey;

  const create = (body: unknown, key = demo.api_keys.admin) =>
    request(t.app)
      .post('/api/webhooks/endpoints')
      .set('Authorization', bearer(key))
      .send(body as object);

  /** Creates an endpoint through the API and returns its 201 body. */
  async function createEndpoint(tenant: DemoTenant = demo, body: object = { url: RECEIVER }) {
    const res = await create(body, tenant.api_keys.admin);
    if (res.status !== 201) throw new Error(`endpoint creation failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as { id: string; url: string; events: string[]; signing_secret: string; created_at: string };
  }

  const storedEndpoint = (id: string) => t.deps.db.webhookEndpoint.findUniqueOrThrow({ where: { id } });

  /** A delivery row written directly, as the relay or the dispatcher would leave it. */
  function insertDelivery(
    endpointId: string,
    options: { tenantId?: string; status?: DeliveryStatus; attemptCount?: number; createdAt?: Date } = {},
  ) {
    return t.deps.db.webhookDelivery.create({
      data: {
        tenantId: options.tenantId ?? demo.tenant.id,
        endpointId,
        eventName: 'booking.confirmed',
        isTest: true,
        testData: { event_id: randomUUID(), schema_version: 2, entity_type: 'booking', entity_id: randomUUID() },
        status: options.status ?? 'pending',
        attemptCount: options.attemptCount ?? 0,
        ...(options.createdAt && { createdAt: options.createdAt }),
      },
    });
  }

  const job = (deliveryId: string) => t.deps.deliveryQueue.getJob(deliveryId);

  async function expectQueued(deliveryId: string) {
    const queued = await job(deliveryId);
    expect(queued).toBeDefined();
    expect(queued!.id).toBe(deliveryId);
    expect(queued!.data).toEqual({ deliveryId, firstAttempt: 0 });
    expect(['waiting', 'delayed', 'prioritized']).toContain(await queued!.getState());
  }

  async function disable(endpointId: string) {
    await t.deps.db.webhookEndpoint.update({
      where: { id: endpointId },
      data: { status: 'disabled', consecutiveFailures: 20, disabledAt: new Date() },
    });
  }

  describe('POST /api/webhooks/endpoints', () => {
    it('when an admin with webhooks:write creates an endpoint, then it answers 201 with the endpoint and its signing secret', async () => {
      const before = Date.now();

      const res = await create({ url: RECEIVER, events: ['booking.created', 'customer.updated'] });

      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.stringMatching(UUID),
        url: RECEIVER,
        events: ['booking.created', 'customer.updated'],
        status: 'active',
        consecutive_failures: 0,
        disabled_at: null,
        previous_secret_expires_at: null,
        created_at: expect.any(String),
        signing_secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{32,}$/),
      });
      const createdAt = Date.parse(res.body.created_at);
      expect(createdAt).toBeGreaterThanOrEqual(before - 1000);
      expect(createdAt).toBeLessThanOrEqual(Date.now() + 1000);
      const stored = await storedEndpoint(res.body.id);
      expect(stored.tenantId).toBe(demo.tenant.id);
      expect(stored.events).toEqual(['booking.created', 'customer.updated']);
      expect(stored.deletedAt).toBeNull();
    });

    it('when an endpoint is created, then its signing secret is stored encrypted and opens back to the secret shown', async () => {
      const created = await createEndpoint();
      const secretBody = created.signing_secret.slice('whsec_'.length);

      const stored = await storedEndpoint(created.id);

      expect(stored.secretCiphertext).not.toContain(created.signing_secret);
      expect(stored.secretCiphertext).not.toContain(secretBody);
      expect(stored.previousSecretCiphertext).toBeNull();
      expect(openSecret(secretKey(), stored.secretCiphertext)).toBe(created.signing_secret);
      // A different key does not open it: it is really encrypted, not encoded.
      expect(() => openSecret('another-key-of-at-least-thirty-two-characters', stored.secretCiphertext)).toThrow();
    });

    it('when two endpoints are created, then each gets its own secret', async () => {
      const [a, b] = await Promise.all([createEndpoint(), createEndpoint()]);

      expect(a.signing_secret).not.toBe(b.signing_secret);
      expect(a.id).not.toBe(b.id);
    });

    it.each([
      ['omitted', { url: RECEIVER }],
      ['empty', { url: RECEIVER, events: [] }],
    ])('when events is %s, then it is stored as [] which means every subscribable event', async (_case, body) => {
      const res = await create(body);

      expect(res.status).toBe(201);
      expect(res.body.events).toEqual([]);
      expect((await storedEndpoint(res.body.id)).events).toEqual([]);
      // The relay reads [] as "all operator-subscribable events", and never a non-subscribable one.
      expect(endpointWants([], 'booking.created')).toBe(true);
      expect(endpointWants([], 'membership.renewed')).toBe(true);
      expect(endpointWants([], 'booking.checked_in')).toBe(false);
    });

    it('when an endpoint lists events, then the relay sends it those and no others', () => {
      const events = ['booking.created'];

      expect(endpointWants(events, 'booking.created')).toBe(true);
      expect(endpointWants(events, 'booking.cancelled')).toBe(false);
      expect(endpointWants(['booking.checked_in'], 'booking.checked_in')).toBe(false);
    });

    it.each([
      ['an event that is not subscribable', { url: RECEIVER, events: ['booking.checked_in'] }, '/events/0'],
      ['an unknown event name', { url: RECEIVER, events: ['booking.created', 'booking.exploded'] }, '/events/1'],
      ['a duplicate event name', { url: RECEIVER, events: ['booking.created', 'booking.created'] }, '/events'],
      ['events that is not an array', { url: RECEIVER, events: 'booking.created' }, '/events'],
      ['an extra field', { url: RECEIVER, events: [], secret: 'mine' }, '/secret'],
      ['no url', { events: ['booking.created'] }, '/url'],
      ['a url that is not a string', { url: 42 }, '/url'],
      ['a url that is not a URI', { url: 'not a url' }, '/url'],
    ])(
      'when the body has %s, then it answers 400 invalid_body naming the field and creates nothing',
      async (_case, body, field) => {
        const countBefore = await t.deps.db.webhookEndpoint.count({ where: { tenantId: demo.tenant.id } });

        const res = await create(body);

        expect(res.status).toBe(400);
        expect(res.body.error).toBe('invalid_body');
        expect(res.body.detail).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
        expect(await t.deps.db.webhookEndpoint.count({ where: { tenantId: demo.tenant.id } })).toBe(countBefore);
      },
    );

    it('when the body is not an object, then it answers 400 invalid_body', async () => {
      const res = await request(t.app)
        .post('/api/webhooks/endpoints')
        .set('Authorization', bearer(demo.api_keys.admin))
        .set('Content-Type', 'application/json')
        .send('["https://hooks.example.com/"]');

      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_body');
    });

    it.each([
      ['plain http', 'http://hooks.example.com/booking'],
      ['a loopback address', 'https://127.0.0.1/hook'],
      ['a loopback address in another spelling', 'https://0x7f000001/hook'],
      ['a private address', 'https://10.0.0.1/hook'],
      ['a link-local address', 'https://169.254.169.254/latest'],
      ['an IPv6 loopback address', 'https://[::1]/hook'],
      ['localhost', 'https://localhost/hook'],
      ['localhost with a trailing dot', 'https://localhost./hook'],
      ['a .localhost name', 'https://api.localhost/hook'],
      ['an .internal name', 'https://billing.internal/hook'],
      ['an .internal name with a trailing dot', 'https://billing.internal./hook'],
      ['credentials', 'https://user:pass@hooks.example.com/hook'],
      ['a user name only', 'https://user@hooks.example.com/hook'],
      ['another scheme', 'ftp://hooks.example.com/hook'],
    ])(
      'when the url uses %s and private URLs are not allowed, then it answers 400 invalid_webhook_url',
      async (_case, url) => {
        const countBefore = await t.deps.db.webhookEndpoint.count({ where: { tenantId: demo.tenant.id } });

        const res = await create({ url });

        expect(res.status).toBe(400);
        expect(res.body.error).toBe('invalid_webhook_url');
        expect(await t.deps.db.webhookEndpoint.count({ where: { tenantId: demo.tenant.id } })).toBe(countBefore);
      },
    );

    describe('with WEBHOOK_ALLOW_PRIVATE_URLS', () => {
      let permissive: TestApp;

      beforeAll(() => {
        permissive = createTestApp({ ...isolated.env, WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
      });
      afterAll(() => permissive.close());

      const createOn = (body: object) =>
        request(permissive.app)
          .post('/api/webhooks/endpoints')
          .set('Authorization', bearer(demo.api_keys.admin))
          .send(body);

      it('when the url is http on a loopback port, then it is accepted', async () => {
        const res = await createOn({ url: 'http://127.0.0.1:8089/hook' });

        expect(res.status).toBe(201);
        expect(res.body.url).toBe('http://127.0.0.1:8089/hook');
        expect((await storedEndpoint(res.body.id)).url).toBe('http://127.0.0.1:8089/hook');
      });

      it.each([
        ['credentials', 'http://user:pass@127.0.0.1:8089/hook'],
        ['another scheme', 'ftp://127.0.0.1/hook'],
      ])('when the url has %s, then it is still refused with 400 invalid_webhook_url', async (_case, url) => {
        const res = await createOn({ url });

        expect(res.status).toBe(400);
        expect(res.body.error).toBe('invalid_webhook_url');
      });
    });
  });

  describe('reading endpoints', () => {
    it('when an admin lists and gets endpoints, then neither answer contains a secret or its ciphertext', async () => {
      const created = await createEndpoint(demo, { url: RECEIVER, events: ['booking.cancelled'] });
      await request(t.app)
        .post(`/api/webhooks/endpoints/${created.id}/rotate-secret`)
        .set('Authorization', bearer(demo.api_keys.admin))
        .expect(200);
      const stored = await storedEndpoint(created.id);

      const list = await request(t.app)
        .get('/api/webhooks/endpoints')
        .set('Authorization', bearer(demo.api_keys.admin));
      const one = await request(t.app)
        .get(`/api/webhooks/endpoints/${created.id}`)
        .set('Authorization', bearer(demo.api_keys.admin));

      expect(list.status).toBe(200);
      expect(one.status).toBe(200);
      const listed = (list.body.data as { id: string }[]).find((e) => e.id === created.id);
      expect(listed).toEqual(one.body);
      expect(one.body).toEqual({
        id: created.id,
        url: RECEIVER,
        events: ['booking.cancelled'],
        status: 'active',
        consecutive_failures: 0,
        disabled_at: null,
        previous_secret_expires_at: expect.any(String),
        created_at: created.created_at,
      });
      for (const text of [list.text, one.text]) {
        expect(text).not.toMatch(/signing_secret|ciphertext|whsec_/i);
        expect(text).not.toContain(stored.secretCiphertext);
        expect(text).not.toContain(stored.previousSecretCiphertext!);
        expect(text).not.toContain(created.signing_secret);
      }
    });

    it("when an admin lists endpoints, then only the tenant's own endpoints are listed, oldest first", async () => {
      const mine = [await createEndpoint(), await createEndpoint()];
      const theirs = await createEndpoint(other);

      const res = await request(t.app).get('/api/webhooks/endpoints').set('Authorization', bearer(demo.api_keys.admin));

      expect(res.status).toBe(200);
      const ids = (res.body.data as { id: string }[]).map((e) => e.id);
      expect(ids).toEqual(expect.arrayContaining(mine.map((e) => e.id)));
      expect(ids).not.toContain(theirs.id);
      expect(ids.indexOf(mine[0]!.id)).toBeLessThan(ids.indexOf(mine[1]!.id));
      const stored = await t.deps.db.webhookEndpoint.findMany({ where: { tenantId: demo.tenant.id, deletedAt: null } });
      expect(ids.sort()).toEqual(stored.map((e) => e.id).sort());
    });
  });

  describe('authentication and scopes', () => {
    it('when no key is given, then every webhook route answers 401 unauthorized', async () => {
      const id = (await createEndpoint()).id;
      const calls = [
        request(t.app).post('/api/webhooks/endpoints').send({ url: RECEIVER }),
        request(t.app).get('/api/webhooks/endpoints'),
        request(t.app).get(`/api/webhooks/endpoints/${id}`),
        request(t.app).delete(`/api/webhooks/endpoints/${id}`),
        request(t.app).post(`/api/webhooks/endpoints/${id}/rotate-secret`),
        request(t.app).post(`/api/webhooks/endpoints/${id}/test`),
        request(t.app).get(`/api/webhooks/endpoints/${id}/deliveries`),
        request(t.app).post(`/api/webhooks/deliveries/${randomUUID()}/redeliver`),
        request(t.app)
          .get('/api/webhooks/endpoints')
          .set('Authorization', 'Bearer svc_nope.not-a-real-key-at-all-really'),
      ];

      const results = await Promise.all(calls);

      for (const res of results) {
        expect(res.status).toBe(401);
        expect(res.body.error).toBe('unauthorized');
      }
      expect((await storedEndpoint(id)).deletedAt).toBeNull();
    });

    it.each(['staff', 'manager'] as const)(
      'when a %s key is used, then reading and writing answer 403 forbidden',
      async (role) => {
        const key = demo.api_keys[role];
        const id = (await createEndpoint()).id;
        const countBefore = await t.deps.db.webhookEndpoint.count({ where: { tenantId: demo.tenant.id } });

        const results = await Promise.all([
          create({ url: RECEIVER }, key),
          request(t.app).get('/api/webhooks/endpoints').set('Authorization', bearer(key)),
          request(t.app).get(`/api/webhooks/endpoints/${id}`).set('Authorization', bearer(key)),
          request(t.app).delete(`/api/webhooks/endpoints/${id}`).set('Authorization', bearer(key)),
          request(t.app).get(`/api/webhooks/endpoints/${id}/deliveries`).set('Authorization', bearer(key)),
        ]);

        for (const res of results) {
          expect(res.status).toBe(403);
          expect(res.body.error).toBe('forbidden');
        }
        expect(await t.deps.db.webhookEndpoint.count({ where: { tenantId: demo.tenant.id } })).toBe(countBefore);
        expect((await storedEndpoint(id)).deletedAt).toBeNull();
      },
    );

    it('when an admin key lacks webhooks:write, then it can read endpoints but not change them', async () => {
      const created = await createEndpoint();
      const key = bearer(readOnlyAdmin);
      const countBefore = await t.deps.db.webhookEndpoint.count({ where: { tenantId: demo.tenant.id } });

      const list = await request(t.app).get('/api/webhooks/endpoints').set('Authorization', key);
      const one = await request(t.app).get(`/api/webhooks/endpoints/${created.id}`).set('Authorization', key);
      const deliveries = await request(t.app)
        .get(`/api/webhooks/endpoints/${created.id}/deliveries`)
        .set('Authorization', key);
      const writes = await Promise.all([
        create({ url: RECEIVER }, readOnlyAdmin),
        request(t.app).delete(`/api/webhooks/endpoints/${created.id}`).set('Authorization', key),
        request(t.app).post(`/api/webhooks/endpoints/${created.id}/rotate-secret`).set('Authorization', key),
        request(t.app).post(`/api/webhooks/endpoints/${created.id}/resume`).set('Authorization', key),
        request(t.app).post(`/api/webhooks/endpoints/${created.id}/test`).set('Authorization', key),
        request(t.app)
          .post(`/api/webhooks/endpoints/${created.id}/recover`)
          .set('Authorization', key)
          .send({ since: new Date(0).toISOString() }),
      ]);

      expect(list.status).toBe(200);
      expect((list.body.data as { id: string }[]).map((e) => e.id)).toContain(created.id);
      expect(one.status).toBe(200);
      expect(one.body.id).toBe(created.id);
      expect(deliveries.status).toBe(200);
      for (const res of writes) {
        expect(res.status).toBe(403);
        expect(res.body).toEqual({ error: 'forbidden', detail: expect.stringContaining('webhooks:write') });
      }
      expect(await t.deps.db.webhookEndpoint.count({ where: { tenantId: demo.tenant.id } })).toBe(countBefore);
      const stored = await storedEndpoint(created.id);
      expect(stored.deletedAt).toBeNull();
      expect(openSecret(secretKey(), stored.secretCiphertext)).toBe(created.signing_secret);
      expect(await t.deps.db.webhookDelivery.count({ where: { endpointId: created.id } })).toBe(0);
    });
  });

  describe('tenant isolation', () => {
    it("when another tenant's admin addresses an endpoint, then every route answers 404 webhook_endpoint_not_found and nothing changes", async () => {
      const created = await createEndpoint();
      await disable(created.id);
      const waiting = await insertDelivery(created.id, { status: 'waiting' });
      const key = bearer(other.api_keys.admin);
      const base = `/api/webhooks/endpoints/${created.id}`;

      const results = await Promise.all([
        request(t.app).get(base).set('Authorization', key),
        request(t.app).delete(base).set('Authorization', key),
        request(t.app).post(`${base}/rotate-secret`).set('Authorization', key),
        request(t.app).post(`${base}/resume`).set('Authorization', key),
        request(t.app).post(`${base}/test`).set('Authorization', key),
        request(t.app).get(`${base}/deliveries`).set('Authorization', key),
        request(t.app)
          .post(`${base}/recover`)
          .set('Authorization', key)
          .send({ since: new Date(0).toISOString() }),
      ]);
      const list = await request(t.app).get('/api/webhooks/endpoints').set('Authorization', key);

      for (const res of results) {
        expect(res.status).toBe(404);
        expect(res.body.error).toBe('webhook_endpoint_not_found');
      }
      expect((list.body.data as { id: string }[]).map((e) => e.id)).not.toContain(created.id);
      const stored = await storedEndpoint(created.id);
      expect(stored.deletedAt).toBeNull();
      expect(stored.status).toBe('disabled');
      expect(stored.previousSecretCiphertext).toBeNull();
      expect(openSecret(secretKey(), stored.secretCiphertext)).toBe(created.signing_secret);
      expect(await t.deps.db.webhookDelivery.findMany({ where: { endpointId: created.id } })).toEqual([
        expect.objectContaining({ id: waiting.id, status: 'waiting' }),
      ]);
      expect(await job(waiting.id)).toBeUndefined();
    });

    it("when another tenant's admin redelivers a delivery, then it answers 404 webhook_delivery_not_found and nothing is queued", async () => {
      const created = await createEndpoint();
      const delivery = await insertDelivery(created.id, { status: 'abandoned', attemptCount: 6 });

      const res = await request(t.app)
        .post(`/api/webhooks/deliveries/${delivery.id}/redeliver`)
        .set('Authorization', bearer(other.api_keys.admin));

      expect(res.status).toBe(404);
      expect(res.body.error).toBe('webhook_delivery_not_found');
      const stored = await t.deps.db.webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } });
      expect(stored.status).toBe('abandoned');
      expect(stored.attemptCount).toBe(6);
      expect(await job(delivery.id)).toBeUndefined();
    });

    it.each(['not-a-uuid', '123', "1' OR '1'='1", randomUUID()])(
      'when the endpoint id is %s, then the endpoint routes answer 404 webhook_endpoint_not_found',
      async (id) => {
        const key = bearer(demo.api_keys.admin);
        const base = `/api/webhooks/endpoints/${encodeURIComponent(id)}`;

        const results = await Promise.all([
          request(t.app).get(base).set('Authorization', key),
          request(t.app).delete(base).set('Authorization', key),
          request(t.app).post(`${base}/rotate-secret`).set('Authorization', key),
          request(t.app).post(`${base}/resume`).set('Authorization', key),
          request(t.app).post(`${base}/test`).set('Authorization', key),
          request(t.app).get(`${base}/deliveries`).set('Authorization', key),
          request(t.app)
            .post(`${base}/recover`)
            .set('Authorization', key)
            .send({ since: new Date(0).toISOString() }),
        ]);

        for (const res of results) {
          expect(res.status).toBe(404);
          expect(res.body.error).toBe('webhook_endpoint_not_found');
        }
      },
    );

    it.each(['not-a-uuid', randomUUID()])(
      'when the delivery id is %s, then redeliver answers 404 webhook_delivery_not_found',
      async (id) => {
        const res = await request(t.app)
          .post(`/api/webhooks/deliveries/${id}/redeliver`)
          .set('Authorization', bearer(demo.api_keys.admin));

        expect(res.status).toBe(404);
        expect(res.body.error).toBe('webhook_delivery_not_found');
      },
    );
  });

  describe('DELETE /api/webhooks/endpoints/{id}', () => {
    it('when an endpoint is deleted, then it answers 204, is gone from reads and its delivery history stays', async () => {
      const created = await createEndpoint();
      const key = bearer(demo.api_keys.admin);
      const test = await request(t.app).post(`/api/webhooks/endpoints/${created.id}/test`).set('Authorization', key);
      expect(test.status).toBe(202);
      const abandoned = await insertDelivery(created.id, { status: 'abandoned', attemptCount: 6 });

      const res = await request(t.app).delete(`/api/webhooks/endpoints/${created.id}`).set('Authorization', key);

      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      const get = await request(t.app).get(`/api/webhooks/endpoints/${created.id}`).set('Authorization', key);
      expect(get.status).toBe(404);
      expect(get.body.error).toBe('webhook_endpoint_not_found');
      const list = await request(t.app).get('/api/webhooks/endpoints').set('Authorization', key);
      expect((list.body.data as { id: string }[]).map((e) => e.id)).not.toContain(created.id);
      expect((await storedEndpoint(created.id)).deletedAt).toBeInstanceOf(Date);
      expect(
        (await t.deps.db.webhookDelivery.findMany({ where: { endpointId: created.id } })).map((d) => d.id).sort(),
      ).toEqual([test.body.delivery_id, abandoned.id].sort());
    });

    it('when an endpoint is deleted, then it can be neither deleted again nor managed, and its deliveries cannot be redelivered', async () => {
      const created = await createEndpoint();
      const abandoned = await insertDelivery(created.id, { status: 'abandoned', attemptCount: 6 });
      const key = bearer(demo.api_keys.admin);
      const base = `/api/webhooks/endpoints/${created.id}`;
      await request(t.app).delete(base).set('Authorization', key).expect(204);

      const again = await request(t.app).delete(base).set('Authorization', key);
      const results = await Promise.all([
        request(t.app).post(`${base}/rotate-secret`).set('Authorization', key),
        request(t.app).post(`${base}/resume`).set('Authorization', key),
        request(t.app).post(`${base}/test`).set('Authorization', key),
        request(t.app).get(`${base}/deliveries`).set('Authorization', key),
        request(t.app)
          .post(`${base}/recover`)
          .set('Authorization', key)
          .send({ since: new Date(0).toISOString() }),
      ]);
      const redeliver = await request(t.app)
        .post(`/api/webhooks/deliveries/${abandoned.id}/redeliver`)
        .set('Authorization', key);

      expect(again.status).toBe(404);
      expect(again.body.error).toBe('webhook_endpoint_not_found');
      for (const r of results) {
        expect(r.status).toBe(404);
        expect(r.body.error).toBe('webhook_endpoint_not_found');
      }
      expect(redeliver.status).toBe(404);
      expect(redeliver.body.error).toBe('webhook_delivery_not_found');
      expect(await job(abandoned.id)).toBeUndefined();
      expect(await t.deps.db.webhookDelivery.count({ where: { endpointId: created.id } })).toBe(1);
    });
  });

  describe('POST /api/webhooks/endpoints/{id}/rotate-secret', () => {
    it('when the secret is rotated, then a new secret is shown once and the old one is kept, encrypted, for 7 days', async () => {
      const created = await createEndpoint();
      const before = Date.now();

      const res = await request(t.app)
        .post(`/api/webhooks/endpoints/${created.id}/rotate-secret`)
        .set('Authorization', bearer(demo.api_keys.admin));

      const after = Date.now();
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: created.id, url: RECEIVER, status: 'active' });
      expect(res.body.signing_secret).toMatch(/^whsec_[A-Za-z0-9_-]{32,}$/);
      expect(res.body.signing_secret).not.toBe(created.signing_secret);
      const expiresAt = Date.parse(res.body.previous_secret_expires_at);
      expect(expiresAt).toBeGreaterThanOrEqual(before + 7 * DAY_MS);
      expect(expiresAt).toBeLessThanOrEqual(after + 7 * DAY_MS);
      const stored = await storedEndpoint(created.id);
      expect(stored.previousSecretExpiresAt?.getTime()).toBe(expiresAt);
      expect(openSecret(secretKey(), stored.secretCiphertext)).toBe(res.body.signing_secret);
      expect(openSecret(secretKey(), stored.previousSecretCiphertext!)).toBe(created.signing_secret);
      expect(stored.secretCiphertext).not.toContain(res.body.signing_secret.slice('whsec_'.length));
      expect(stored.previousSecretCiphertext).not.toContain(created.signing_secret.slice('whsec_'.length));

      const get = await request(t.app)
        .get(`/api/webhooks/endpoints/${created.id}`)
        .set('Authorization', bearer(demo.api_keys.admin));
      expect(get.body.previous_secret_expires_at).toBe(res.body.previous_secret_expires_at);
      expect(get.text).not.toContain(res.body.signing_secret);
    });

    it('when two rotations race (both held on the row until each has started), then they queue: the stored secret and the previous one are the two shown, and none is lost', async () => {
      const created = await createEndpoint();
      const original = created.signing_secret as string;
      // Another transaction holds the endpoint's row, so both rotations get as far as they can
      // before either writes: read-then-write rotations would both have read the original.
      const holder = new Client({ connectionString: isolated.env.DATABASE_URL });
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query('SELECT id FROM webhook_endpoints WHERE id = $1 FOR UPDATE', [created.id]);
        const rotate = () =>
          request(t.app)
            .post(`/api/webhooks/endpoints/${created.id}/rotate-secret`)
            .set('Authorization', bearer(demo.api_keys.admin))
            .then((res) => res);
        const racing = Promise.all([rotate(), rotate()]);
        await waitUntil(
          async () => {
            const [row] = await t.deps.db.$queryRaw<{ n: bigint }[]>`
              SELECT count(*) AS n FROM pg_stat_activity
              WHERE wait_event_type = 'Lock' AND query LIKE '%UPDATE%webhook_endpoints%'`;
            return Number(row!.n) === 2;
          },
          { what: 'both rotations waiting on the row' },
        );
        await holder.query('COMMIT');
        const answers = await racing;

        expect(answers.map((res) => res.status)).toEqual([200, 200]);
        const shown = answers.map((res) => res.body.signing_secret as string);
        const stored = await storedEndpoint(created.id);
        const current = openSecret(secretKey(), stored.secretCiphertext);
        const previous = openSecret(secretKey(), stored.previousSecretCiphertext!);
        expect(shown).toContain(current);
        expect(previous).not.toBe(original);
        expect(shown.filter((secret) => secret !== current)).toEqual([previous]);
      } finally {
        await holder.end();
      }
    });
  });

  describe('POST /api/webhooks/endpoints/{id}/test', () => {
    const sendTest = (id: string, body?: object) => {
      const req = request(t.app)
        .post(`/api/webhooks/endpoints/${id}/test`)
        .set('Authorization', bearer(demo.api_keys.admin));
      return body === undefined ? req : req.send(body);
    };

    it('when a test delivery is asked for without a body, then a booking.confirmed test delivery is recorded and queued', async () => {
      const created = await createEndpoint();

      const res = await sendTest(created.id);

      expect(res.status).toBe(202);
      expect(res.body).toEqual({ delivery_id: expect.stringMatching(UUID) });
      const delivery = await t.deps.db.webhookDelivery.findUniqueOrThrow({ where: { id: res.body.delivery_id } });
      expect(delivery).toMatchObject({
        tenantId: demo.tenant.id,
        endpointId: created.id,
        eventId: null,
        eventName: 'booking.confirmed',
        isTest: true,
        status: 'pending',
        attemptCount: 0,
      });
      expect(delivery.testData).toEqual({
        event_id: expect.stringMatching(UUID),
        schema_version: 2,
        entity_type: 'booking',
        entity_id: expect.stringMatching(UUID),
      });
      await expectQueued(delivery.id);
    });

    it.each([
      ['customer.updated', 'customer'],
      ['wallet.funded', 'wallet'],
      ['membership.renewed', 'membership'],
      ['order.created', 'order'],
      ['booking.cancelled', 'booking'],
    ])('when the test event is %s, then its entity_type is %s', async (event, entityType) => {
      const created = await createEndpoint();

      const res = await sendTest(created.id, { event });

      expect(res.status).toBe(202);
      const delivery = await t.deps.db.webhookDelivery.findUniqueOrThrow({ where: { id: res.body.delivery_id } });
      expect(delivery.eventName).toBe(event);
      expect(delivery.testData).toMatchObject({ schema_version: 2, entity_type: entityType });
      await expectQueued(delivery.id);
    });

    it.each([
      ['a non-subscribable event', { event: 'booking.checked_in' }],
      ['an unknown event', { event: 'booking.exploded' }],
      ['an extra field', { event: 'booking.created', data: {} }],
    ])('when the body has %s, then it answers 400 invalid_body and records nothing', async (_case, body) => {
      const created = await createEndpoint();

      const res = await sendTest(created.id, body);

      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_body');
      expect(await t.deps.db.webhookDelivery.count({ where: { endpointId: created.id } })).toBe(0);
    });
  });

  describe('GET /api/webhooks/endpoints/{id}/deliveries', () => {
    const list = (id: string, query: Record<string, string> = {}) =>
      request(t.app)
        .get(`/api/webhooks/endpoints/${id}/deliveries`)
        .query(query)
        .set('Authorization', bearer(demo.api_keys.admin));

    it('when an endpoint has deliveries, then they are listed newest first, each with its attempts', async () => {
      const created = await createEndpoint();
      const t0 = Date.now() - 60_000;
      const older = await insertDelivery(created.id, {
        status: 'abandoned',
        attemptCount: 2,
        createdAt: new Date(t0),
      });
      const newer = await insertDelivery(created.id, { status: 'pending', createdAt: new Date(t0 + 1000) });
      const startedAt = new Date(t0 + 100);
      await t.deps.db.webhookAttempt.createMany({
        data: [
          {
            deliveryId: older.id,
            attemptNumber: 2,
            startedAt: new Date(t0 + 30_100),
            durationMs: 10_001,
            statusCode: null,
            error: 'timed out after 10000 ms',
            responseBody: null,
            succeeded: false,
          },
          {
            deliveryId: older.id,
            attemptNumber: 1,
            startedAt,
            durationMs: 42,
            statusCode: 500,
            error: null,
            responseBody: 'boom',
            succeeded: false,
          },
        ],
      });
      const otherEndpoint = await createEndpoint();
      await insertDelivery(otherEndpoint.id);

      const res = await list(created.id);

      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        data: [
          {
            id: newer.id,
            event: 'booking.confirmed',
            event_id: null,
            status: 'pending',
            is_test: true,
            attempt_count: 0,
            next_attempt_at: null,
            created_at: new Date(t0 + 1000).toISOString(),
            attempts: [],
          },
          {
            id: older.id,
            event: 'booking.confirmed',
            event_id: null,
            status: 'abandoned',
            is_test: true,
            attempt_count: 2,
            next_attempt_at: null,
            created_at: new Date(t0).toISOString(),
            attempts: [
              {
                attempt_number: 1,
                started_at: startedAt.toISOString(),
                status_code: 500,
                duration_ms: 42,
                succeeded: false,
                error: null,
                response_body: 'boom',
              },
              {
                attempt_number: 2,
                started_at: new Date(t0 + 30_100).toISOString(),
                status_code: null,
                duration_ms: 10_001,
                succeeded: false,
                error: 'timed out after 10000 ms',
                response_body: null,
              },
            ],
          },
        ],
        next_starting_after: null,
      });
    });

    it('when limit and starting_after are given, then the deliveries come in pages linked by next_starting_after', async () => {
      const created = await createEndpoint();
      const t0 = Date.now() - 60_000;
      const made = [];
      for (let i = 0; i < 5; i++) made.push(await insertDelivery(created.id, { createdAt: new Date(t0 + i * 1000) }));
      const newestFirst = made.map((d) => d.id).reverse();

      const first = await list(created.id, { limit: '2' });
      const second = await list(created.id, { limit: '2', starting_after: first.body.next_starting_after });
      const third = await list(created.id, { limit: '2', starting_after: second.body.next_starting_after });

      expect(first.status).toBe(200);
      expect(first.body.data.map((d: { id: string }) => d.id)).toEqual(newestFirst.slice(0, 2));
      expect(first.body.next_starting_after).toBe(newestFirst[1]);
      expect(second.body.data.map((d: { id: string }) => d.id)).toEqual(newestFirst.slice(2, 4));
      expect(second.body.next_starting_after).toBe(newestFirst[3]);
      expect(third.body.data.map((d: { id: string }) => d.id)).toEqual(newestFirst.slice(4));
      expect(third.body.next_starting_after).toBeNull();
    });

    it('when deliveries share a created_at (one relay batch), then paging lists each exactly once', async () => {
      const created = await createEndpoint();
      const at = new Date(Date.now() - 30_000);
      await t.deps.db.webhookDelivery.createMany({
        data: Array.from({ length: 5 }, () => ({
          tenantId: demo.tenant.id,
          endpointId: created.id,
          eventName: 'booking.created',
          isTest: true,
          createdAt: at,
        })),
      });

      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 5; page++) {
        const res = await list(created.id, { limit: '2', ...(cursor && { starting_after: cursor }) });
        seen.push(...res.body.data.map((d: { id: string }) => d.id));
        cursor = res.body.next_starting_after ?? undefined;
        if (!cursor) break;
      }

      expect(seen).toHaveLength(5);
      expect(new Set(seen).size).toBe(5);
    });

    it('when more than 20 deliveries exist and no limit is given, then 20 are listed', async () => {
      const created = await createEndpoint();
      const t0 = Date.now() - 60_000;
      await t.deps.db.webhookDelivery.createMany({
        data: Array.from({ length: 21 }, (_, i) => ({
          tenantId: demo.tenant.id,
          endpointId: created.id,
          eventName: 'booking.created',
          isTest: true,
          createdAt: new Date(t0 + i * 10),
        })),
      });

      const res = await list(created.id);
      const max = await list(created.id, { limit: '100' });

      expect(res.status).toBe(200);
      expect(res.body.data).toHaveLength(20);
      expect(res.body.next_starting_after).toBe(res.body.data[19].id);
      expect(max.body.data).toHaveLength(21);
      expect(max.body.next_starting_after).toBeNull();
    });

    it.each([
      ['limit 0', { limit: '0' }],
      ['limit 101', { limit: '101' }],
      ['limit x', { limit: 'x' }],
      ['a negative limit', { limit: '-1' }],
      ['starting_after that is not a uuid', { starting_after: 'yesterday' }],
      ['the old before parameter', { before: '2026-01-01T00:00:00Z' }],
      ['an unknown parameter', { page: '2' }],
    ])('when the query has %s, then it answers 400 invalid_query', async (_case, query) => {
      const created = await createEndpoint();

      const res = await list(created.id, query);

      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_query');
    });
  });

  describe('POST /api/webhooks/deliveries/{id}/redeliver', () => {
    const redeliver = (id: string) =>
      request(t.app).post(`/api/webhooks/deliveries/${id}/redeliver`).set('Authorization', bearer(demo.api_keys.admin));

    it('when an abandoned delivery is redelivered, then it is pending again with a fresh schedule and queued under its own id', async () => {
      const created = await createEndpoint();
      const delivery = await insertDelivery(created.id, { status: 'abandoned', attemptCount: 6 });
      expect(await job(delivery.id)).toBeUndefined();

      const res = await redeliver(delivery.id);

      expect(res.status).toBe(202);
      expect(res.body).toEqual({ delivery_id: delivery.id, status: 'pending' });
      const stored = await t.deps.db.webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } });
      expect(stored.status).toBe('pending');
      expect(stored.attemptCount).toBe(0);
      expect(stored.nextAttemptAt).toBeNull();
      await expectQueued(delivery.id);
    });

    it('when a delivery still queued is redelivered, then its job stays the only one', async () => {
      const created = await createEndpoint();
      const test = await request(t.app)
        .post(`/api/webhooks/endpoints/${created.id}/test`)
        .set('Authorization', bearer(demo.api_keys.admin));
      const countBefore = await t.deps.deliveryQueue.getJobCountByTypes('waiting', 'delayed', 'prioritized');

      const res = await redeliver(test.body.delivery_id);

      expect(res.status).toBe(202);
      await expectQueued(test.body.delivery_id);
      expect(await t.deps.deliveryQueue.getJobCountByTypes('waiting', 'delayed', 'prioritized')).toBe(countBefore);
    });

    it('when the endpoint is disabled, then it answers 409 webhook_endpoint_disabled and leaves the delivery alone', async () => {
      const created = await createEndpoint();
      const delivery = await insertDelivery(created.id, { status: 'abandoned', attemptCount: 6 });
      await disable(created.id);

      const res = await redeliver(delivery.id);

      expect(res.status).toBe(409);
      expect(res.body.error).toBe('webhook_endpoint_disabled');
      const stored = await t.deps.db.webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } });
      expect(stored.status).toBe('abandoned');
      expect(stored.attemptCount).toBe(6);
      expect(await job(delivery.id)).toBeUndefined();
    });
  });

  describe('POST /api/webhooks/endpoints/{id}/resume', () => {
    it('when a disabled endpoint is resumed, then it is active again and exactly its waiting deliveries are pending and queued', async () => {
      const created = await createEndpoint();
      await disable(created.id);
      const waiting = [
        await insertDelivery(created.id, { status: 'waiting' }),
        await insertDelivery(created.id, { status: 'waiting' }),
        await insertDelivery(created.id, { status: 'waiting', attemptCount: 3 }),
      ];
      const abandoned = await insertDelivery(created.id, { status: 'abandoned', attemptCount: 6 });
      const succeeded = await insertDelivery(created.id, { status: 'succeeded', attemptCount: 1 });
      const otherEndpoint = await createEndpoint();
      await disable(otherEndpoint.id);
      const othersWaiting = await insertDelivery(otherEndpoint.id, { status: 'waiting' });

      const res = await request(t.app)
        .post(`/api/webhooks/endpoints/${created.id}/resume`)
        .set('Authorization', bearer(demo.api_keys.admin));

      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: created.id,
        status: 'active',
        consecutive_failures: 0,
        disabled_at: null,
        resumed_deliveries: 3,
      });
      expect(res.body).not.toHaveProperty('signing_secret');
      const stored = await storedEndpoint(created.id);
      expect(stored.status).toBe('active');
      expect(stored.consecutiveFailures).toBe(0);
      expect(stored.disabledAt).toBeNull();
      for (const delivery of waiting) {
        const row = await t.deps.db.webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } });
        expect(row.status).toBe('pending');
        expect(row.attemptCount).toBe(0);
        await expectQueued(delivery.id);
      }
      for (const [delivery, status] of [
        [abandoned, 'abandoned'],
        [succeeded, 'succeeded'],
      ] as const) {
        expect((await t.deps.db.webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } })).status).toBe(status);
        expect(await job(delivery.id)).toBeUndefined();
      }
      expect((await storedEndpoint(otherEndpoint.id)).status).toBe('disabled');
      expect((await t.deps.db.webhookDelivery.findUniqueOrThrow({ where: { id: othersWaiting.id } })).status).toBe(
        'waiting',
      );
      expect(await job(othersWaiting.id)).toBeUndefined();
    });

    it('when more deliveries wait than one statement moves, then resume sends every one of them, each queued once', async () => {
      const created = await createEndpoint();
      await disable(created.id);
      await t.deps.db.webhookDelivery.createMany({
        data: Array.from({ length: 2_500 }, () => ({
          tenantId: demo.tenant.id,
          endpointId: created.id,
          eventName: 'booking.created',
          isTest: true,
          status: 'waiting' as const,
        })),
      });

      const res = await request(t.app)
        .post(`/api/webhooks/endpoints/${created.id}/resume`)
        .set('Authorization', bearer(demo.api_keys.admin));

      expect([res.status, res.body.resumed_deliveries]).toEqual([200, 2_500]);
      const rows = await t.deps.db.webhookDelivery.findMany({ where: { endpointId: created.id } });
      expect(rows.filter((row) => row.status === 'pending')).toHaveLength(2_500);
      const jobs = await Promise.all(rows.map((row) => job(row.id)));
      expect(jobs.filter((queued) => queued !== undefined)).toHaveLength(2_500);
    });

    it('when an active endpoint with nothing waiting is resumed, then it answers 200 with no resumed deliveries', async () => {
      const created = await createEndpoint();

      const res = await request(t.app)
        .post(`/api/webhooks/endpoints/${created.id}/resume`)
        .set('Authorization', bearer(demo.api_keys.admin));

      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: created.id, status: 'active', resumed_deliveries: 0 });
    });
  });

  describe('POST /api/webhooks/endpoints/{id}/recover', () => {
    const recover = (id: string, body: unknown) =>
      request(t.app)
        .post(`/api/webhooks/endpoints/${id}/recover`)
        .set('Authorization', bearer(demo.api_keys.admin))
        .send(body as object);

    it('when deliveries are recovered since a time, then only the abandoned ones created at or after it are pending and queued', async () => {
      const created = await createEndpoint();
      const since = new Date(Date.now() - 60 * 60_000);
      const tooOld = await insertDelivery(created.id, {
        status: 'abandoned',
        attemptCount: 6,
        createdAt: new Date(since.getTime() - 1),
      });
      const atSince = await insertDelivery(created.id, { status: 'abandoned', attemptCount: 6, createdAt: since });
      const later = await insertDelivery(created.id, {
        status: 'abandoned',
        attemptCount: 6,
        createdAt: new Date(since.getTime() + 60_000),
      });
      const succeeded = await insertDelivery(created.id, { status: 'succeeded', attemptCount: 1 });
      const pending = await insertDelivery(created.id, { status: 'pending', attemptCount: 2 });
      const otherEndpoint = await createEndpoint();
      const othersAbandoned = await insertDelivery(otherEndpoint.id, { status: 'abandoned', attemptCount: 6 });

      const res = await recover(created.id, { since: since.toISOString() });

      expect(res.status).toBe(202);
      expect(res.body).toEqual({ recovered: 2 });
      for (const delivery of [atSince, later]) {
        const row = await t.deps.db.webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } });
        expect(row.status).toBe('pending');
        expect(row.attemptCount).toBe(0);
        await expectQueued(delivery.id);
      }
      for (const [delivery, status, attempts] of [
        [tooOld, 'abandoned', 6],
        [succeeded, 'succeeded', 1],
        [pending, 'pending', 2],
        [othersAbandoned, 'abandoned', 6],
      ] as const) {
        const row = await t.deps.db.webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } });
        expect(row.status).toBe(status);
        expect(row.attemptCount).toBe(attempts);
        expect(await job(delivery.id)).toBeUndefined();
      }
    });

    it('when nothing was abandoned since the time, then it answers 202 with none recovered', async () => {
      const created = await createEndpoint();
      await insertDelivery(created.id, { status: 'abandoned', createdAt: new Date(Date.now() - DAY_MS) });

      const res = await recover(created.id, { since: new Date(Date.now() - 60_000).toISOString() });

      expect(res.status).toBe(202);
      expect(res.body).toEqual({ recovered: 0 });
    });

    it.each([
      ['no since', {}],
      ['a since that is not a date-time', { since: 'last tuesday' }],
      ['a since that is a number', { since: 1_700_000_000_000 }],
      ['an extra field', { since: new Date().toISOString(), status: 'all' }],
    ])('when the body has %s, then it answers 400 invalid_body', async (_case, body) => {
      const created = await createEndpoint();
      const abandoned = await insertDelivery(created.id, { status: 'abandoned', attemptCount: 6 });

      const res = await recover(created.id, body);

      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_body');
      expect((await t.deps.db.webhookDelivery.findUniqueOrThrow({ where: { id: abandoned.id } })).status).toBe(
        'abandoned',
      );
    });

    it('when the endpoint is disabled, then it answers 409 webhook_endpoint_disabled and recovers nothing', async () => {
      const created = await createEndpoint();
      const abandoned = await insertDelivery(created.id, { status: 'abandoned', attemptCount: 6 });
      await disable(created.id);

      const res = await recover(created.id, { since: new Date(0).toISOString() });

      expect(res.status).toBe(409);
      expect(res.body.error).toBe('webhook_endpoint_disabled');
      expect((await t.deps.db.webhookDelivery.findUniqueOrThrow({ where: { id: abandoned.id } })).status).toBe(
        'abandoned',
      );
      expect(await job(abandoned.id)).toBeUndefined();
    });
  });

  describe('GET /api/admin/queues', () => {
    const PASSWORD = 'operator-dashboard-password';
    let withDashboard: TestApp;
    beforeAll(() => {
      withDashboard = createTestApp({ ...isolated.env, QUEUE_DASHBOARD_PASSWORD: PASSWORD });
    });
    afterAll(() => withDashboard.close());

    it('when no credentials are given, then it answers 401 with a Basic login prompt', async () => {
      const res = await request(withDashboard.app).get('/api/admin/queues');

      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Basic /);
      expect(res.body.error).toBe('unauthorized');
    });

    it('when the password is wrong, or a tenant admin key is offered, then it answers 401: tenants never see the shared queue', async () => {
      const wrong = await request(withDashboard.app).get('/api/admin/queues').auth('x', 'not-the-password');
      const tenantKey = await request(withDashboard.app).get('/api/admin/queues').auth('x', demo.api_keys.admin);
      const bearer = await request(withDashboard.app)
        .get('/api/admin/queues')
        .set('Authorization', `Bearer ${demo.api_keys.admin}`);

      for (const res of [wrong, tenantKey, bearer]) {
        expect(res.status).toBe(401);
        expect(res.headers['www-authenticate']).toMatch(/^Basic /);
      }
    });

    it('when the dashboard password is given, then the dashboard page is served', async () => {
      const res = await request(withDashboard.app).get('/api/admin/queues').auth('ops', PASSWORD);

      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.text).toMatch(/<html/i);
    });

    it('when no dashboard password is configured, then there is no dashboard', async () => {
      const res = await request(t.app).get('/api/admin/queues').auth('x', demo.api_keys.admin);

      expect(res.status).toBe(404);
      expect(res.body.error).toBe('not_found');
    });
  });
});

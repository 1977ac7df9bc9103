import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import { signToken } from '@booking/signing';
import {
  bearer,
  cardPaidBooking,
  createIsolatedDatabase,
  createTestApp,
  type FakeStripe,
  hostsTableLookup,
  LOCAL_HOSTS,
  seedMembership,
  seedMembershipPlan,
  seedTenant,
  startFakeStripe,
  stopFakeStripe,
  stripeEnv,
  type TestApp,
} from '@booking/test-kit';

// Every operator route of the served OpenAPI document, called with tenant B's admin key (so no
// role check hides a tenant check) against tenant A's resources. None may read or change A's
// data: routes that name one of A's resources answer 404, the others answer about B alone, and
// A's rows, A's queued deliveries and the payment provider see nothing.
//
// Coverage comes from the document: a new operator route whose path parameter this file cannot
// fill, or whose request body it has no example for, fails the test until it is added below.
// The database and queue prefix are this file's own: test deliveries are queued here.

/** Tenant A's resources, whose ids are put where B's requests name a resource. */
interface TenantAResources {
  bookingId: string;
  customerId: string;
  customerEmail: string;
  refundId: string;
  shiftId: string;
  endpointId: string;
  endpointUrl: string;
  deliveryId: string;
  venueId: string;
  /** Another slot of the booking's experience, for a reschedule. */
  otherSlotId: string;
  checkInToken: string;
  walletId: string;
  tokenId: string;
  /** A till order of A, settled with a wallet tender. */
  orderId: string;
  /** An active membership of A and a benefit of its plan. */
  membershipId: string;
  benefitId: string;
  /** The plan of that membership. */
  planId: string;
  /** A booked freeze of that membership (which also has a holder photo). */
  freezeId: string;
}

/** Path parameters by the collection segment before them: `/api/bookings/{id}/...` is A's booking. */
const PATH_RESOURCES: Record<string, (a: TenantAResources) => string> = {
  'bookings/{id}': (a) => a.bookingId,
  'customers/{id}': (a) => a.customerId,
  'refunds/{id}': (a) => a.refundId,
  'shifts/{id}': (a) => a.shiftId,
  'endpoints/{id}': (a) => a.endpointId,
  'deliveries/{id}': (a) => a.deliveryId,
  'orders/{id}': (a) => a.orderId,
  'wallets/{id}': (a) => a.walletId,
  'tokens/{tokenId}': (a) => a.tokenId,
  'memberships/{id}': (a) => a.membershipId,
  'benefits/{benefitId}': (a) => a.benefitId,
  'membership-plans/{id}': (a) => a.planId,
  'freezes/{freezeId}': (a) => a.freezeId,
};

interface Example {
  /** The request body (or query), valid for the route, so only the tenant check can refuse it. */
  make: (a: TenantAResources) => Record<string, unknown>;
  /** It names one of A's resources: the route must answer 404. */
  namesTenantA: boolean;
}

/** Request bodies by `METHOD path`; every operator route with a request body needs one. */
const BODIES: Record<string, Example> = {
  'POST /api/bookings/check-in-by-token': { make: (a) => ({ token: a.checkInToken }), namesTenantA: true },
  'POST /api/webhooks/endpoints': {
    make: () => ({ url: 'https://hooks.example.com/tenant-b' }),
    namesTenantA: false,
  },
  'POST /api/webhooks/endpoints/{id}/test': { make: () => ({ event: 'booking.created' }), namesTenantA: true },
  'POST /api/webhooks/endpoints/{id}/recover': {
    make: () => ({ since: new Date(Date.now() - 86_400_000).toISOString() }),
    namesTenantA: true,
  },
  'POST /api/bookings/{id}/reschedule': { make: (a) => ({ slot_id: a.otherSlotId }), namesTenantA: true },
  'POST /api/bookings/{id}/transfer': {
    make: () => ({ customer: { email: 'mallory@example.com', first_name: 'Mallory' }, reason: 'isolation test' }),
    namesTenantA: true,
  },
  'POST /api/bookings/{id}/party': { make: () => ({ guest_count: 2 }), namesTenantA: true },
  'PATCH /api/customers/{id}': { make: () => ({ first_name: 'Mallory' }), namesTenantA: true },
  'POST /api/gift-cards/sell': {
    make: (a) => ({ amount_cents: 1000, currency: 'USD', payment_method: 'cash', shift_id: a.shiftId }),
    namesTenantA: true,
  },
  'POST /api/pos/shifts/open': { make: (a) => ({ starting_cash_cents: 0, venue_id: a.venueId }), namesTenantA: true },
  'POST /api/pos/shifts/close': { make: (a) => ({ shift_id: a.shiftId, counted_cash_cents: 0 }), namesTenantA: true },
  'POST /api/pos/shifts/{id}/cash-payments': {
    make: (a) => ({ booking_id: a.bookingId, amount_cents: 100 }),
    namesTenantA: true,
  },
  'POST /api/payments/refunds': { make: (a) => ({ booking_id: a.bookingId, amount_cents: 100 }), namesTenantA: true },
  'POST /api/refunds/partial': {
    make: (a) => ({ booking_id: a.bookingId, amount_cents: 100, keep_booking_active: true }),
    namesTenantA: true,
  },
  'POST /api/pos/orders': {
    make: (a) => ({
      shift_id: a.shiftId,
      currency: 'USD',
      lines: [{ type: 'wallet_load', wallet_id: a.walletId, amount_cents: 100 }],
    }),
    namesTenantA: true,
  },
  'POST /api/pos/orders/{id}/tenders': { make: () => ({ type: 'cash', amount_cents: 100 }), namesTenantA: true },
  'POST /api/pos/orders/{id}/settle': { make: () => ({}), namesTenantA: true },
  'POST /api/v1/orders/{id}/refunds': { make: () => ({ amount_cents: 100 }), namesTenantA: true },
  'POST /api/v1/wallets': { make: (a) => ({ customer_id: a.customerId, currency: 'USD' }), namesTenantA: true },
  'POST /api/v1/wallets/{id}/tokens': { make: () => ({ kind: 'card' }), namesTenantA: true },
  'POST /api/v1/wallets/{id}/tokens/{tokenId}/replace': { make: () => ({}), namesTenantA: true },
  'POST /api/v1/wallets/{id}/tokens/{tokenId}/revoke': { make: () => ({}), namesTenantA: true },
  'POST /api/v1/wallets/{id}/adjustments': {
    make: () => ({ amount_cents: 100, reason: 'isolation' }),
    namesTenantA: true,
  },
  // A fixed-term plan: B's own, and nothing asked of Stripe.
  'POST /api/v1/membership-plans': {
    make: () => ({ name: 'B pass', billing: 'fixed_term', price_cents: 1000, currency: 'USD', term_days: 30 }),
    namesTenantA: false,
  },
  'PATCH /api/v1/membership-plans/{id}': { make: () => ({ name: 'Mallory' }), namesTenantA: true },
  'POST /api/v1/memberships/imports': {
    make: (a) => ({
      rows: [
        {
          external_ref: 'isolation-1',
          plan_id: a.planId,
          customer: { email: 'mallory@example.com', first_name: 'Mallory' },
          status: 'active',
          starts_at: '2026-01-01T00:00:00.000Z',
        },
      ],
    }),
    namesTenantA: true,
  },
  'POST /api/v1/memberships/{id}/benefits/{benefitId}/use': { make: () => ({ quantity: 1 }), namesTenantA: true },
  'POST /api/v1/memberships/{id}/guest-passes/use': { make: () => ({ guest_count: 1 }), namesTenantA: true },
  'POST /api/v1/memberships/{id}/cancel': { make: () => ({ at: 'now' }), namesTenantA: true },
  'POST /api/v1/memberships/{id}/plan-change': {
    make: () => ({ to_plan_id: '00000000-0000-4000-8000-000000000000', when: 'period_end' }),
    namesTenantA: true,
  },
  'POST /api/v1/memberships/{id}/freezes': {
    make: () => ({ starts_on: '2099-01-01', ends_on: '2099-01-10' }),
    namesTenantA: true,
  },
  'POST /api/v1/memberships/{id}/freezes/{freezeId}/cancel': { make: () => ({}), namesTenantA: true },
  'POST /api/v1/memberships/{id}/holder': {
    make: () => ({ customer: { email: 'mallory@example.com', first_name: 'Mallory' } }),
    namesTenantA: true,
  },
  // JSON, not an image: the membership is checked before the body's type.
  'PUT /api/v1/memberships/{id}/holder-photo': { make: () => ({}), namesTenantA: true },
  'POST /api/v1/membership-plans/{id}/price-changes': {
    make: () => ({ price_cents: 100, effective_on: '2099-01-01' }),
    namesTenantA: true,
  },
};

/** Query strings by `METHOD path`, for routes that can look A's data up without an id. */
const QUERIES: Record<string, Example> = {
  'GET /api/v1/customers': { make: (a) => ({ email: a.customerEmail }), namesTenantA: false },
  'GET /api/v1/wallets': { make: (a) => ({ customer_id: a.customerId }), namesTenantA: false },
  'GET /api/v1/orders': { make: (a) => ({ customer_id: a.customerId }), namesTenantA: false },
};

interface Operation {
  method: string;
  path: string;
  hasBody: boolean;
}

/** The operations that take a tenant API key, from the document's security requirements. */
function operatorOperations(document: {
  paths: Record<string, Record<string, { security?: Record<string, unknown>[]; requestBody?: unknown }>>;
}): Operation[] {
  const operator: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!['get', 'put', 'post', 'patch', 'delete'].includes(method)) continue;
      if (operation.security?.some((requirement) => 'apiKey' in requirement)) {
        operator.push({ method: method.toUpperCase(), path, hasBody: operation.requestBody !== undefined });
      }
    }
  }
  return operator;
}

/** The path with A's resources in its parameters, or the parameters nothing here can fill. */
function fillPath(path: string, a: TenantAResources): { url: string } | { unfilled: string[] } {
  const unfilled: string[] = [];
  const url = path.replace(/([^/]+)\/\{([^}]+)\}/g, (whole, collection: string, name: string) => {
    const resource = PATH_RESOURCES[`${collection}/{${name}}`];
    if (!resource) {
      unfilled.push(whole);
      return whole;
    }
    return `${collection}/${resource(a)}`;
  });
  return unfilled.length > 0 ? { unfilled } : { url };
}

describe('tenant isolation of every operator route', () => {
  let isolated: Awaited<ReturnType<typeof createIsolatedDatabase>>;
  let fake: FakeStripe;
  let t: TestApp;
  let a: DemoTenant;
  let b: DemoTenant;
  let resources: TenantAResources;

  beforeAll(async () => {
    isolated = await createIsolatedDatabase();
    fake = await startFakeStripe();
    t = createTestApp(
      { ...isolated.env, ...stripeEnv(fake.url) },
      { lookupHost: hostsTableLookup({ ...LOCAL_HOSTS, 'hooks.example.com': ['93.184.216.34'] }) },
    );
    [a, b] = await Promise.all([seedTenant(t.deps), seedTenant(t.deps)]);
    resources = await createTenantAResources();
  }, 120_000);

  afterAll(async () => {
    if (t) {
      await t.deps.deliveryQueue.obliterate({ force: true }).catch(() => undefined);
      await t.close();
    }
    await stopFakeStripe(fake);
    await isolated?.drop();
  }, 60_000);

  /** Requests with `key`; `method` as the document spells it. */
  const as = (key: string) => ({
    send: (method: string, url: string, body?: Record<string, unknown>) => {
      const verb = method.toLowerCase() as 'get' | 'post' | 'patch' | 'delete';
      const req = request(t.app)[verb](url).set('Authorization', bearer(key));
      return body === undefined ? req : req.send(body);
    },
  });

  /** Fails unless A's own request succeeded; returns its body. */
  async function ok(res: Promise<request.Response> | request.Test) {
    const answer = await res;
    if (answer.status >= 300) throw new Error(`set-up request failed: ${answer.status} ${answer.text}`);
    return answer.body as Record<string, unknown>;
  }

  /**
   * One of everything an operator route can name, all of tenant A: a booking paid by card with
   * a signed waiver and a partial refund, its customer, an open shift, a webhook endpoint with a
   * delivery.
   */
  async function createTenantAResources(): Promise<TenantAResources> {
    const experience = a.experiences[0]!;
    const { booking_id: bookingId, ip, waiver_url } = await cardPaidBooking(t, fake, a, { experience, guests: 1 });
    const waiverPath = new URL(waiver_url!).pathname;
    const waiver = await ok(request(t.app).get(waiverPath));
    await ok(
      request(t.app)
        .post(`${waiverPath}/sign`)
        .set('X-Forwarded-For', ip)
        .send({
          signer_name: 'Ada Lovelace',
          participant_name: 'Ada Lovelace',
          consent: true,
          waiver_version: (waiver.waiver as { version: string }).version,
        }),
    );
    const refund = await ok(
      as(a.api_keys.manager).send('POST', '/api/refunds/partial', {
        booking_id: bookingId,
        amount_cents: 100,
        keep_booking_active: true,
      }),
    );
    const shift = await ok(as(a.api_keys.staff).send('POST', '/api/pos/shifts/open', { starting_cash_cents: 1000 }));
    const endpointUrl = 'https://hooks.example.com/tenant-a';
    const endpoint = await ok(as(a.api_keys.admin).send('POST', '/api/webhooks/endpoints', { url: endpointUrl }));
    const delivery = await ok(as(a.api_keys.admin).send('POST', `/api/webhooks/endpoints/${endpoint.id}/test`, {}));
    const booking = await t.deps.db.booking.findUniqueOrThrow({
      where: { id: bookingId },
      include: { customer: true },
    });
    // A wallet of A's customer with value and a token, and a till order it paid.
    const wallet = await ok(
      as(a.api_keys.staff).send('POST', '/api/v1/wallets', { customer_id: booking.customerId, currency: 'USD' }),
    );
    const walletId = wallet.wallet_id as string;
    await ok(
      as(a.api_keys.admin).send('POST', `/api/v1/wallets/${walletId}/adjustments`, {
        amount_cents: 5000,
        reason: 'seed',
      }),
    );
    const token = await ok(as(a.api_keys.staff).send('POST', `/api/v1/wallets/${walletId}/tokens`, { kind: 'card' }));
    const order = await ok(
      as(a.api_keys.staff).send('POST', '/api/pos/orders', {
        shift_id: shift.shift_id,
        currency: 'USD',
        customer_id: booking.customerId,
        lines: [{ type: 'product', description: 'map', quantity: 1, unit_price_cents: 1200 }],
      }),
    );
    await ok(
      as(a.api_keys.staff).send('POST', `/api/pos/orders/${order.order_id}/tenders`, {
        type: 'wallet',
        amount_cents: 1200,
        wallet_token: token.secret,
      }),
    );
    await ok(as(a.api_keys.staff).send('POST', `/api/pos/orders/${order.order_id}/settle`, {}));
    const plan = await seedMembershipPlan(t.deps.db, a.tenant.id, { currency: 'USD' });
    const membership = await seedMembership(t.deps.db, plan);
    const freeze = await t.deps.db.membershipFreeze.create({
      data: {
        membershipId: membership.id,
        startsOn: new Date('2099-02-01'),
        endsOn: new Date('2099-02-10'),
        status: 'booked',
        requestedBy: 'staff',
      },
    });
    const photo = await t.deps.db.membershipPhoto.create({
      data: {
        membershipId: membership.id,
        holderCustomerId: membership.holderCustomerId,
        contentType: 'image/png',
        image: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
        sha256: '0'.repeat(64),
      },
    });
    await t.deps.db.membership.update({ where: { id: membership.id }, data: { holderPhotoId: photo.id } });
    return {
      membershipId: membership.id,
      benefitId: plan.benefits[0]!.id,
      planId: plan.id,
      freezeId: freeze.id,
      walletId,
      tokenId: token.token_id as string,
      orderId: order.order_id as string,
      bookingId,
      customerId: booking.customerId,
      customerEmail: booking.customer.email!,
      refundId: refund.refund_id as string,
      shiftId: shift.shift_id as string,
      endpointId: endpoint.id as string,
      endpointUrl,
      deliveryId: delivery.delivery_id as string,
      venueId: a.venue_id,
      otherSlotId: experience.slots[1]!.id,
      checkInToken: signToken(t.deps.config.tokenSigningSecret, 'check_in', {
        subject: bookingId,
        tenantId: a.tenant.id,
        ttlSeconds: 3600,
      }),
    };
  }

  /**
   * Every row of tenant A: each table with a tenant_id, the tenant itself, and the rows that
   * hang off A's bookings and deliveries without a tenant_id of their own.
   */
  async function snapshotOfTenantA(): Promise<Record<string, unknown[]>> {
    const db = t.deps.db;
    const tables = await db.$queryRaw<{ table_name: string }[]>`
      SELECT table_name FROM information_schema.columns
      WHERE table_schema = current_schema() AND column_name = 'tenant_id' ORDER BY table_name`;
    const rowsOf = (sql: string) =>
      db.$queryRawUnsafe<{ row: unknown }[]>(sql, a.tenant.id).then((rows) => rows.map(({ row }) => row));
    const snapshot: Record<string, unknown[]> = {};
    for (const { table_name: table } of tables) {
      snapshot[table] = await rowsOf(
        `SELECT to_jsonb(x) AS row FROM "${table}" x WHERE tenant_id = $1::uuid ORDER BY to_jsonb(x)::text`,
      );
    }
    snapshot.tenants = await rowsOf(`SELECT to_jsonb(x) AS row FROM tenants x WHERE id = $1::uuid`);
    snapshot.booking_addons = await rowsOf(
      `SELECT to_jsonb(x) AS row FROM booking_addons x JOIN bookings b ON b.id = x.booking_id
       WHERE b.tenant_id = $1::uuid ORDER BY to_jsonb(x)::text`,
    );
    for (const [table, parent] of [
      ['wallet_lots', 'wallets'],
      ['wallet_entries', 'wallets'],
      ['order_lines', 'orders'],
      ['order_tenders', 'orders'],
    ] as const) {
      const key = parent === 'wallets' ? 'wallet_id' : 'order_id';
      snapshot[table] = await rowsOf(
        `SELECT to_jsonb(x) AS row FROM ${table} x JOIN ${parent} p ON p.id = x.${key}
         WHERE p.tenant_id = $1::uuid ORDER BY to_jsonb(x)::text`,
      );
    }
    snapshot.webhook_attempts = await rowsOf(
      `SELECT to_jsonb(x) AS row FROM webhook_attempts x JOIN webhook_deliveries d ON d.id = x.delivery_id
       WHERE d.tenant_id = $1::uuid ORDER BY to_jsonb(x)::text`,
    );
    return snapshot;
  }

  it("when tenant B's admin calls every operator route with tenant A's resources, then each is 404 or about B alone, and nothing of A's is read or changed", async () => {
    const document = (await request(t.app).get('/api/openapi.json').expect(200)).body;
    const operator = operatorOperations(document);
    expect(operator.length).toBeGreaterThan(20);

    // Coverage first: every operator route must be walkable with what this file knows.
    const uncovered: string[] = [];
    for (const { method, path, hasBody } of operator) {
      const filled = fillPath(path, resources);
      if ('unfilled' in filled) uncovered.push(`${method} ${path}: no resource of A for ${filled.unfilled.join(', ')}`);
      if (hasBody && !BODIES[`${method} ${path}`]) uncovered.push(`${method} ${path}: no request body example`);
    }
    expect(uncovered).toEqual([]);

    // A's identifiers, none of which may appear in any answer to B.
    const secretsOfA = [
      a.tenant.id,
      resources.bookingId,
      resources.customerId,
      resources.customerEmail,
      resources.refundId,
      resources.shiftId,
      resources.endpointId,
      resources.endpointUrl,
      resources.deliveryId,
      resources.walletId,
      resources.tokenId,
      resources.orderId,
      resources.membershipId,
    ];
    const before = await snapshotOfTenantA();
    const jobsBefore = await t.deps.deliveryQueue.getJobCounts();
    const providerCallsBefore = fake.requests.length;

    const violations: string[] = [];
    for (const { method, path } of operator) {
      const key = `${method} ${path}`;
      const filled = fillPath(path, resources) as { url: string };
      const body = BODIES[key]?.make(resources);
      const query = QUERIES[key]?.make(resources);
      const url = query ? `${filled.url}?${new URLSearchParams(query as Record<string, string>)}` : filled.url;
      const namesTenantA = filled.url !== path || Boolean(BODIES[key]?.namesTenantA || QUERIES[key]?.namesTenantA);

      const res = await as(b.api_keys.admin).send(method, url, body);

      // supertest leaves `text` unset for the image of qr.svg; its body is then a Buffer.
      const text = res.text ?? String(res.body);
      const expected = namesTenantA ? 'a 404' : 'a 2xx about B';
      const fits = namesTenantA ? res.status === 404 : res.status >= 200 && res.status < 300;
      if (!fits) violations.push(`${key}: ${res.status} ${text.slice(0, 200)} (expected ${expected})`);
      const leaked = secretsOfA.filter((secret) => text.includes(secret));
      if (leaked.length > 0) violations.push(`${key}: the answer contains A's ${leaked.join(', ')}`);
    }

    expect(violations).toEqual([]);
    expect(await snapshotOfTenantA()).toEqual(before);
    expect(await t.deps.deliveryQueue.getJobCounts()).toEqual(jobsBefore);
    expect(fake.requests.slice(providerCallsBefore)).toEqual([]);
    // The ids were real: A reaches each of its resources through the same read routes.
    for (const { path } of operator.filter((op) => op.method === 'GET' && op.path.includes('{'))) {
      const { url } = fillPath(path, resources) as { url: string };
      expect({ path, status: (await as(a.api_keys.admin).send('GET', url)).status }).toEqual({ path, status: 200 });
    }
  });
});

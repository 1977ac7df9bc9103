import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import {
  deliverStripeEvent,
  type FakeStripe,
  openShift,
  seedTenant,
  signedPaymentSucceededEvent,
  startStripeTestApp,
  stopStripeTestApp,
  TEST_WEBHOOK_SECRET,
  type TestApp,
  walletTopUp,
} from '@booking/test-kit';

// Operators' reads of orders on the real PostgreSQL and Redis: one tenant of its own holds
// online top-ups (paid and unpaid) and till orders (confirmed and voided), so the list's filters
// and pages can be checked exactly.

let fake: FakeStripe;
let t: TestApp;
let demo: DemoTenant;
let other: DemoTenant;
const orders: Record<'paid' | 'unpaid' | 'sameCustomer' | 'confirmed' | 'voided', string> = {
  paid: '',
  unpaid: '',
  sameCustomer: '',
  confirmed: '',
  voided: '',
};
let customerId: string;

const as = (tenant: DemoTenant, role: 'staff' | 'manager' | 'admin' = 'staff') => ({
  Authorization: `Bearer ${tenant.api_keys[role]}`,
});
const list = (query: Record<string, string | number>, tenant = demo) =>
  request(t.app).get('/api/v1/orders').query(query).set(as(tenant));
const ids = (res: request.Response) => res.body.data.map((order: { order_id: string }) => order.order_id);

const topUp = (email: string, cents: number) => walletTopUp(t, demo, cents, { email, first_name: 'Ola' });

async function tillOrder(shiftId: string) {
  const res = await request(t.app)
    .post('/api/pos/orders')
    .set(as(demo))
    .send({
      shift_id: shiftId,
      currency: 'USD',
      lines: [{ type: 'product', description: 'tea', quantity: 2, unit_price_cents: 250 }],
    });
  expect(res.status).toBe(201);
  const id = res.body.order_id as string;
  expect(
    (await request(t.app).post(`/api/pos/orders/${id}/tenders`).set(as(demo)).send({ type: 'cash', amount_cents: 500 }))
      .status,
  ).toBe(201);
  return id;
}

beforeAll(async () => {
  ({ fake, t } = await startStripeTestApp());
  demo = await seedTenant(t.deps);
  other = await seedTenant(t.deps);
  const email = `reader-${randomUUID()}@example.com`;
  // Created one after another, so newest first is the reverse of this order.
  const paid = await topUp(email, 1200);
  await deliverStripeEvent(
    t,
    signedPaymentSucceededEvent(fake.succeed(paid.payment_intent_id), { secret: TEST_WEBHOOK_SECRET }),
  );
  orders.paid = paid.order_id;
  orders.unpaid = (await topUp(`reader-${randomUUID()}@example.com`, 800)).order_id;
  orders.sameCustomer = (await topUp(email, 300)).order_id;
  const shiftId = await openShift(t, demo);
  orders.confirmed = await tillOrder(shiftId);
  expect((await request(t.app).post(`/api/pos/orders/${orders.confirmed}/settle`).set(as(demo)).send({})).status).toBe(
    200,
  );
  orders.voided = await tillOrder(shiftId);
  expect((await request(t.app).post(`/api/pos/orders/${orders.voided}/void`).set(as(demo)).send({})).status).toBe(200);
  customerId = (await t.deps.db.order.findUniqueOrThrow({ where: { id: orders.paid } })).customerId!;
});
afterAll(() => stopStripeTestApp(t, fake));

describe('listing orders', () => {
  it('when staff walk the pages, then every order comes once, newest first, and the last page says so', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    for (let page = 0; page < 5 && (page === 0 || after); page += 1) {
      const res = await list({ limit: 2, ...(after && { starting_after: after }) });
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...ids(res));
      after = res.body.next_starting_after;
    }
    expect(after).toBeNull();
    expect(seen).toEqual([orders.voided, orders.confirmed, orders.sameCustomer, orders.unpaid, orders.paid]);
    const whole = await list({});
    expect(ids(whole)).toEqual(seen);
    expect(whole.body.next_starting_after).toBeNull();
  });

  it('when filters are given, then they combine', async () => {
    expect(ids(await list({ status: 'paid' }))).toEqual([orders.paid]);
    expect(ids(await list({ status: 'pending_payment' }))).toEqual([orders.sameCustomer, orders.unpaid]);
    expect(ids(await list({ kind: 'retail' }))).toEqual([orders.voided, orders.confirmed]);
    expect(ids(await list({ channel: 'pos', status: 'voided' }))).toEqual([orders.voided]);
    expect(ids(await list({ channel: 'online', kind: 'retail' }))).toEqual([]);
    expect(ids(await list({ customer_id: customerId }))).toEqual([orders.sameCustomer, orders.paid]);
    expect(ids(await list({ customer_id: customerId, status: 'paid', limit: 1 }))).toEqual([orders.paid]);
  });

  it('when the query is bad, then 400 invalid_query; a starting_after of no order of the tenant is 404', async () => {
    const bad: Record<string, string | number>[] = [
      { limit: 0 },
      { limit: 101 },
      { limit: 'ten' },
      { starting_after: 'nope' },
      { customer_id: 'x' },
      { status: 'lost' },
      { kind: 'subscription' },
      { channel: 'phone' },
      { sort: 'asc' },
    ];
    for (const query of bad) {
      const res = await list(query);
      expect([res.status, res.body.error, query]).toEqual([400, 'invalid_query', query]);
    }
    const foreignOrder = (await list({ limit: 1 }, demo)).body.data[0].order_id as string;
    for (const after of [randomUUID(), foreignOrder]) {
      const res = await list({ starting_after: after }, after === foreignOrder ? other : demo);
      expect([res.status, res.body.error]).toEqual([404, 'order_not_found']);
    }
  });

  it('when another tenant lists, then it sees none of these orders; without a key, 401', async () => {
    expect(ids(await list({ limit: 100 }, other))).toEqual([]);
    const anonymous = await request(t.app).get('/api/v1/orders');
    expect([anonymous.status, anonymous.body.error]).toEqual([401, 'unauthorized']);
  });
});

describe('reading one order', () => {
  it('when staff read a paid top-up and a confirmed till order, then each comes with its lines and tenders', async () => {
    const topUp = await request(t.app).get(`/api/v1/orders/${orders.paid}`).set(as(demo));
    expect(topUp.status).toBe(200);
    expect(topUp.body).toMatchObject({
      order_id: orders.paid,
      channel: 'online',
      kind: 'wallet_topup',
      status: 'paid',
      customer_id: customerId,
      total_cents: 1200,
      paid_cents: 1200,
      refunded_cents: 0,
      refunds: [],
    });
    expect(topUp.body.wallet_id).toEqual(expect.any(String));
    const till = await request(t.app).get(`/api/v1/orders/${orders.confirmed}`).set(as(demo));
    expect(till.body).toMatchObject({
      channel: 'pos',
      kind: 'retail',
      status: 'confirmed',
      total_cents: 500,
      paid_cents: 500,
      lines: [{ type: 'product', quantity: 2, unit_price_cents: 250, total_cents: 500 }],
      tenders: [{ type: 'cash', status: 'captured', amount_cents: 500, refunded_cents: 0 }],
    });
  });

  it('when the order is another tenant’s, unknown, or the id is not a uuid, then 404 order_not_found', async () => {
    for (const [id, tenant] of [
      [orders.paid, other],
      [randomUUID(), demo],
      ['not-a-uuid', demo],
    ] as const) {
      const res = await request(t.app).get(`/api/v1/orders/${id}`).set(as(tenant));
      expect([res.status, res.body.error]).toEqual([404, 'order_not_found']);
    }
  });
});

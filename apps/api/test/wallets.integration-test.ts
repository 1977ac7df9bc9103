import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import { createTestApp, keyIdOf, seedTenant, type TestApp } from '@booking/test-kit';
import { hashWalletToken } from '@booking/signing';
import { creditWallet } from '../src/wallets/wallet-ledger';
import { lockWallet } from '../src/locks';

// The operator wallet routes on the real PostgreSQL and Redis: opening and reading wallets,
// their tokens (secrets shown once, never stored or sent in events) and admin adjustments.

let t: TestApp;
let demo: DemoTenant;
let other: DemoTenant;

const auth = (key: string) => ({ Authorization: `Bearer ${key}` });

async function newCustomer(tenantId: string) {
  return t.deps.db.customer.create({
    data: { tenantId, email: `wallet-${randomUUID()}@example.com`, firstName: 'Wanda' },
  });
}

async function openWallet(tenant: DemoTenant = demo, currency = 'USD') {
  const customer = await newCustomer(tenant.tenant.id);
  const res = await request(t.app)
    .post('/api/v1/wallets')
    .set(auth(tenant.api_keys.staff))
    .send({ customer_id: customer.id, currency });
  expect(res.status).toBe(201);
  return { walletId: res.body.wallet_id as string, customerId: customer.id };
}

async function fund(walletId: string, amountCents: number, expiresAt: Date | null = null) {
  await t.deps.db.$transaction(async (tx) => {
    const wallet = (await lockWallet(tx, { tenantId: demo.tenant.id }, walletId))!;
    await creditWallet(tx, wallet, { kind: 'adjustment', source: 'adjustment', amountCents, expiresAt });
  });
}

const eventsOf = (walletId: string, name: string) =>
  t.deps.db.event.findMany({ where: { entityId: walletId, name }, orderBy: { createdAt: 'asc' } });

beforeAll(async () => {
  t = createTestApp();
  demo = await seedTenant(t.deps);
  other = await seedTenant(t.deps);
});
afterAll(() => t.close());

describe('opening and reading wallets', () => {
  it('when staff open a wallet twice for one customer and currency, then the first is 201 and the second 200 with the same empty wallet', async () => {
    const customer = await newCustomer(demo.tenant.id);
    const body = { customer_id: customer.id, currency: 'EUR' };
    const first = await request(t.app).post('/api/v1/wallets').set(auth(demo.api_keys.staff)).send(body);
    const second = await request(t.app).post('/api/v1/wallets').set(auth(demo.api_keys.staff)).send(body);
    expect(first.status).toBe(201);
    expect(second.status).toBe(200);
    expect(second.body.wallet_id).toBe(first.body.wallet_id);
    expect(first.body).toMatchObject({ balance_cents: 0, held_cents: 0, available_cents: 0, lots: [], tokens: [] });
  });

  it('when staff open one wallet several times at once, then one request made it (201) and the others got it (200)', async () => {
    const customer = await newCustomer(demo.tenant.id);
    const answers = await Promise.all(
      [0, 1, 2, 3].map(() =>
        request(t.app)
          .post('/api/v1/wallets')
          .set(auth(demo.api_keys.staff))
          .send({ customer_id: customer.id, currency: 'GBP' }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 201]);
    expect(new Set(answers.map((a) => a.body.wallet_id)).size).toBe(1);
    expect(await t.deps.db.wallet.count({ where: { customerId: customer.id } })).toBe(1);
  });

  it("when the customer is unknown or another tenant's, or the currency is malformed, then 404 customer_not_found or 400 invalid_body", async () => {
    const foreign = await newCustomer(other.tenant.id);
    for (const customerId of [randomUUID(), foreign.id]) {
      const res = await request(t.app)
        .post('/api/v1/wallets')
        .set(auth(demo.api_keys.staff))
        .send({ customer_id: customerId, currency: 'USD' });
      expect(res.status).toBe(404);
      expect(res.body.error).toBe('customer_not_found');
    }
    const customer = await newCustomer(demo.tenant.id);
    for (const currency of ['usd', 'US', 'USDD', 5]) {
      const res = await request(t.app)
        .post('/api/v1/wallets')
        .set(auth(demo.api_keys.staff))
        .send({ customer_id: customer.id, currency });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_body');
    }
  });

  it("when a wallet is funded, then its view, the list and the ledger agree; another tenant's key finds nothing", async () => {
    const { walletId, customerId } = await openWallet();
    await fund(walletId, 700);
    await fund(walletId, 300, new Date(Date.now() + 86_400_000));
    const view = await request(t.app).get(`/api/v1/wallets/${walletId}`).set(auth(demo.api_keys.staff));
    expect(view.status).toBe(200);
    expect(view.body).toMatchObject({ balance_cents: 1000, held_cents: 0, available_cents: 1000 });
    expect(view.body.lots.map((lot: { remaining_cents: number }) => lot.remaining_cents).sort()).toEqual([300, 700]);

    const list = await request(t.app)
      .get('/api/v1/wallets')
      .query({ customer_id: customerId })
      .set(auth(demo.api_keys.staff));
    expect(list.body.data.map((w: { wallet_id: string }) => w.wallet_id)).toEqual([walletId]);

    const entries = await request(t.app)
      .get(`/api/v1/wallets/${walletId}/entries`)
      .query({ limit: 1 })
      .set(auth(demo.api_keys.staff));
    expect(entries.body.data).toHaveLength(1);
    expect(entries.body.data[0]).toMatchObject({ kind: 'adjustment', balance_delta: 300, balance_after: 1000 });
    const next = await request(t.app)
      .get(`/api/v1/wallets/${walletId}/entries`)
      .query({ starting_after: entries.body.next_starting_after })
      .set(auth(demo.api_keys.staff));
    expect(next.body.data).toHaveLength(1);
    expect(next.body.data[0]).toMatchObject({ balance_delta: 700, balance_after: 700 });
    expect(next.body.next_starting_after).toBeNull();

    for (const path of [`/api/v1/wallets/${walletId}`, `/api/v1/wallets/${walletId}/entries`, '/api/v1/wallets/nope']) {
      const res = await request(t.app).get(path).set(auth(other.api_keys.staff));
      expect(res.status).toBe(404);
      expect(res.body.error).toBe('wallet_not_found');
    }
    const bad = await request(t.app).get('/api/v1/wallets').query({ limit: '0' }).set(auth(demo.api_keys.staff));
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('invalid_query');
  });
});

describe('listing wallets', () => {
  it('when a customer has wallets in two currencies, then the list pages through them in order, filters by currency, and refuses a bad query', async () => {
    const customer = await newCustomer(demo.tenant.id);
    const opened: string[] = [];
    for (const currency of ['USD', 'EUR']) {
      const res = await request(t.app)
        .post('/api/v1/wallets')
        .set(auth(demo.api_keys.staff))
        .send({ customer_id: customer.id, currency });
      opened.push(res.body.wallet_id);
    }
    const list = (query: Record<string, string>) =>
      request(t.app).get('/api/v1/wallets').query(query).set(auth(demo.api_keys.staff));

    const first = await list({ customer_id: customer.id, limit: '1' });
    expect(first.body.data.map((w: { wallet_id: string }) => w.wallet_id)).toEqual([opened[0]]);
    const second = await list({ customer_id: customer.id, limit: '1', starting_after: first.body.next_starting_after });
    expect(second.body.data.map((w: { wallet_id: string }) => w.wallet_id)).toEqual([opened[1]]);
    expect(second.body.next_starting_after).toBeNull();
    const euro = await list({ customer_id: customer.id, currency: 'EUR' });
    expect(euro.body.data).toEqual([
      expect.objectContaining({ wallet_id: opened[1], currency: 'EUR', balance_cents: 0 }),
    ]);

    const foreign = await request(t.app)
      .get('/api/v1/wallets')
      .query({ customer_id: customer.id })
      .set(auth(other.api_keys.staff));
    expect(foreign.body.data).toEqual([]);

    const unknown = await list({ starting_after: randomUUID() });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe('wallet_not_found');
    const badQueries: Record<string, string>[] = [
      { limit: '101' },
      { customer_id: 'nope' },
      { currency: 'eur' },
      { colour: 'red' },
    ];
    for (const query of badQueries) {
      const res = await list(query);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_query');
    }
  });

  it("when the ledger is read with a bad page, then 404 for an entry that is not this wallet's and 400 for a bad limit", async () => {
    const { walletId } = await openWallet();
    const { walletId: otherWallet } = await openWallet();
    await fund(otherWallet, 100);
    const [foreignEntry] = await t.deps.db.walletEntry.findMany({ where: { walletId: otherWallet } });
    const page = (query: Record<string, string>) =>
      request(t.app).get(`/api/v1/wallets/${walletId}/entries`).query(query).set(auth(demo.api_keys.staff));
    const notOurs = await page({ starting_after: foreignEntry!.id });
    expect(notOurs.status).toBe(404);
    expect(notOurs.body.error).toBe('wallet_not_found');
    for (const limit of ['0', 'ten', '1.5']) {
      const res = await page({ limit });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_query');
    }
    const empty = await page({});
    expect(empty.body).toEqual({ data: [], next_starting_after: null });
  });
});

describe('wallet tokens', () => {
  it('when staff issue a card token, then its secret is answered once, stored only hashed, and wallet.access_changed names it without the secret', async () => {
    const { walletId } = await openWallet();
    const res = await request(t.app)
      .post(`/api/v1/wallets/${walletId}/tokens`)
      .set(auth(demo.api_keys.staff))
      .send({ kind: 'card' });
    expect(res.status).toBe(201);
    const secret = res.body.secret as string;
    expect(secret).toMatch(/^W[A-Z2-9]{4}(-[A-Z2-9]{4}){4}$/);
    const row = await t.deps.db.walletToken.findUniqueOrThrow({ where: { id: res.body.token_id } });
    expect(row.tokenHash).toBe(hashWalletToken(secret));
    expect(JSON.stringify(row)).not.toContain(secret.replace(/-/g, '').slice(1));

    const [event] = await eventsOf(walletId, 'wallet.access_changed');
    expect(event!.data).toMatchObject({
      wallet_id: walletId,
      action: 'issued',
      token_id: res.body.token_id,
      token_kind: 'card',
      token_last4: res.body.last4,
      previous_token_id: null,
    });
    expect(JSON.stringify(event!.data)).not.toContain(secret);

    const view = await request(t.app).get(`/api/v1/wallets/${walletId}`).set(auth(demo.api_keys.staff));
    expect(view.body.tokens).toEqual([expect.objectContaining({ token_id: res.body.token_id, status: 'active' })]);
    expect(JSON.stringify(view.body)).not.toContain(secret);
  });

  it('when a token is replaced, then the old one is revoked pointing at the new one, one replaced event names both, and replacing it again is 409', async () => {
    const { walletId } = await openWallet();
    const issued = await request(t.app)
      .post(`/api/v1/wallets/${walletId}/tokens`)
      .set(auth(demo.api_keys.staff))
      .send({ kind: 'qr' });
    const replaced = await request(t.app)
      .post(`/api/v1/wallets/${walletId}/tokens/${issued.body.token_id}/replace`)
      .set(auth(demo.api_keys.staff))
      .send({ reason: 'phone lost' });
    expect(replaced.status).toBe(201);
    expect(replaced.body).toMatchObject({ kind: 'qr', status: 'active' });
    expect(replaced.body.secret).toMatch(/^wq_/);
    const old = await t.deps.db.walletToken.findUniqueOrThrow({ where: { id: issued.body.token_id } });
    expect(old).toMatchObject({ status: 'revoked', replacedById: replaced.body.token_id });
    const events = await eventsOf(walletId, 'wallet.access_changed');
    expect(events.map((e) => (e.data as { action: string }).action)).toEqual(['issued', 'replaced']);
    expect(events[1]!.data).toMatchObject({
      token_id: replaced.body.token_id,
      previous_token_id: issued.body.token_id,
      reason: 'phone lost',
    });

    const again = await request(t.app)
      .post(`/api/v1/wallets/${walletId}/tokens/${issued.body.token_id}/replace`)
      .set(auth(demo.api_keys.staff))
      .send({});
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('wallet_token_revoked');
  });

  it('when a token is revoked, then staff are refused, a manager revokes it once, and unknown tokens are 404', async () => {
    const { walletId } = await openWallet();
    const issued = await request(t.app)
      .post(`/api/v1/wallets/${walletId}/tokens`)
      .set(auth(demo.api_keys.staff))
      .send({ kind: 'card' });
    const path = `/api/v1/wallets/${walletId}/tokens/${issued.body.token_id}/revoke`;
    expect((await request(t.app).post(path).set(auth(demo.api_keys.staff)).send({})).status).toBe(403);
    const revoked = await request(t.app).post(path).set(auth(demo.api_keys.manager)).send({ reason: 'lost' });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ status: 'revoked', token_id: issued.body.token_id });
    const again = await request(t.app).post(path).set(auth(demo.api_keys.manager)).send({});
    expect(again.body.error).toBe('wallet_token_revoked');
    const unknown = await request(t.app)
      .post(`/api/v1/wallets/${walletId}/tokens/${randomUUID()}/revoke`)
      .set(auth(demo.api_keys.manager))
      .send({});
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe('wallet_token_not_found');
    const badKind = await request(t.app)
      .post(`/api/v1/wallets/${walletId}/tokens`)
      .set(auth(demo.api_keys.staff))
      .send({ kind: 'nfc' });
    expect(badKind.body.error).toBe('invalid_body');
    const events = await eventsOf(walletId, 'wallet.access_changed');
    expect(events.map((e) => (e.data as { action: string }).action)).toEqual(['issued', 'revoked']);
  });
});

describe('wallet token retries, races and refusals', () => {
  it('when staff retry an issue with the same Idempotency-Key, then they get the same token and secret, one token and one event exist, and Redis keeps no readable secret', async () => {
    const { walletId } = await openWallet();
    const key = `issue-${randomUUID()}`;
    const issue = () =>
      request(t.app)
        .post(`/api/v1/wallets/${walletId}/tokens`)
        .set(auth(demo.api_keys.staff))
        .set('Idempotency-Key', key)
        .send({ kind: 'qr' });
    const first = await issue();
    const retry = await issue();
    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.get('Idempotent-Replayed')).toBe('true');
    expect(retry.body).toEqual(first.body);
    expect(await t.deps.db.walletToken.count({ where: { walletId } })).toBe(1);
    expect(await eventsOf(walletId, 'wallet.access_changed')).toHaveLength(1);

    const stored = await t.deps.redis.keys('idem:wallet-token:*');
    expect(stored.length).toBeGreaterThan(0);
    const values = await t.deps.redis.mget(...stored);
    for (const value of values) expect(value ?? '').not.toContain(first.body.secret);
  });

  it('when two replaces of one token race, then one replaces it and the other is 409 wallet_token_revoked, with one replaced event', async () => {
    const { walletId } = await openWallet();
    const issued = await request(t.app)
      .post(`/api/v1/wallets/${walletId}/tokens`)
      .set(auth(demo.api_keys.staff))
      .send({ kind: 'card' });
    const path = `/api/v1/wallets/${walletId}/tokens/${issued.body.token_id}/replace`;
    const answers = await Promise.all(
      [0, 1, 2].map(() => request(t.app).post(path).set(auth(demo.api_keys.staff)).send({})),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409]);
    expect(answers.filter((a) => a.status === 409).map((a) => a.body.error)).toEqual([
      'wallet_token_revoked',
      'wallet_token_revoked',
    ]);
    const events = await eventsOf(walletId, 'wallet.access_changed');
    expect(events.map((e) => (e.data as { action: string }).action)).toEqual(['issued', 'replaced']);
    const tokens = await t.deps.db.walletToken.findMany({ where: { walletId, status: 'active' } });
    expect(tokens.map((token) => token.id)).toEqual([answers.find((a) => a.status === 201)!.body.token_id]);
  });

  it("when a token route names another tenant's wallet, another wallet's token or an id that is not a uuid, then 404 and nothing changes", async () => {
    const { walletId } = await openWallet();
    const { walletId: foreignWallet } = await openWallet(other);
    const { walletId: siblingWallet } = await openWallet();
    const sibling = await request(t.app)
      .post(`/api/v1/wallets/${siblingWallet}/tokens`)
      .set(auth(demo.api_keys.staff))
      .send({ kind: 'card' });

    const foreign = await request(t.app)
      .post(`/api/v1/wallets/${foreignWallet}/tokens`)
      .set(auth(demo.api_keys.staff))
      .send({ kind: 'card' });
    expect([foreign.status, foreign.body.error]).toEqual([404, 'wallet_not_found']);
    const notUuid = await request(t.app)
      .post('/api/v1/wallets/not-a-wallet/tokens')
      .set(auth(demo.api_keys.staff))
      .send({ kind: 'card' });
    expect([notUuid.status, notUuid.body.error]).toEqual([404, 'wallet_not_found']);

    for (const [action, key] of [
      ['replace', demo.api_keys.staff],
      ['revoke', demo.api_keys.manager],
    ] as const) {
      for (const tokenId of [sibling.body.token_id, randomUUID(), 'not-a-token']) {
        const res = await request(t.app)
          .post(`/api/v1/wallets/${walletId}/tokens/${tokenId}/${action}`)
          .set(auth(key))
          .send({});
        expect([res.status, res.body.error]).toEqual([404, 'wallet_token_not_found']);
      }
      const res = await request(t.app)
        .post(`/api/v1/wallets/${foreignWallet}/tokens/${randomUUID()}/${action}`)
        .set(auth(key))
        .send({});
      expect([res.status, res.body.error]).toEqual([404, 'wallet_not_found']);
    }
    const siblingToken = await t.deps.db.walletToken.findUniqueOrThrow({ where: { id: sibling.body.token_id } });
    expect(siblingToken.status).toBe('active');
    expect(await t.deps.db.walletToken.count({ where: { walletId: { in: [walletId, foreignWallet] } } })).toBe(0);
  });

  it('when a token body is bad, then 400 invalid_body: a missing or unknown kind, an empty or long reason, an extra field', async () => {
    const { walletId } = await openWallet();
    const issued = await request(t.app)
      .post(`/api/v1/wallets/${walletId}/tokens`)
      .set(auth(demo.api_keys.staff))
      .send({ kind: 'card' });
    for (const body of [{}, { kind: 'CARD' }, { kind: 'card', extra: 1 }]) {
      const res = await request(t.app)
        .post(`/api/v1/wallets/${walletId}/tokens`)
        .set(auth(demo.api_keys.staff))
        .send(body);
      expect([res.status, res.body.error]).toEqual([400, 'invalid_body']);
    }
    for (const [action, key] of [
      ['replace', demo.api_keys.staff],
      ['revoke', demo.api_keys.manager],
    ] as const) {
      for (const body of [{ reason: '' }, { reason: 'x'.repeat(501) }, { reason: 'lost', kind: 'qr' }]) {
        const res = await request(t.app)
          .post(`/api/v1/wallets/${walletId}/tokens/${issued.body.token_id}/${action}`)
          .set(auth(key))
          .send(body);
        expect([res.status, res.body.error]).toEqual([400, 'invalid_body']);
      }
    }
    const view = await request(t.app).get(`/api/v1/wallets/${walletId}`).set(auth(demo.api_keys.staff));
    expect(view.body.tokens).toEqual([
      {
        token_id: issued.body.token_id,
        wallet_id: walletId,
        kind: 'card',
        last4: issued.body.last4,
        status: 'active',
        replaced_by_id: null,
        created_at: expect.any(String),
        revoked_at: null,
      },
    ]);
  });
});

describe('adjustments', () => {
  it('when an admin credits and debits a wallet, then the ledger records both with the reason; a debit above available is 409 and other roles are 403', async () => {
    const { walletId } = await openWallet();
    const path = `/api/v1/wallets/${walletId}/adjustments`;
    const credit = await request(t.app)
      .post(path)
      .set(auth(demo.api_keys.admin))
      .send({ amount_cents: 800, reason: 'goodwill' });
    expect(credit.status).toBe(201);
    expect(credit.body).toMatchObject({ balance_cents: 800, available_cents: 800 });
    expect(credit.body.lots[0]).toMatchObject({ source: 'adjustment', expires_at: null });
    const debit = await request(t.app)
      .post(path)
      .set(auth(demo.api_keys.admin))
      .send({ amount_cents: -300, reason: 'fix' });
    expect(debit.body.balance_cents).toBe(500);
    const over = await request(t.app)
      .post(path)
      .set(auth(demo.api_keys.admin))
      .send({ amount_cents: -501, reason: 'x' });
    expect(over.status).toBe(409);
    expect(over.body).toMatchObject({ error: 'insufficient_wallet_balance', detail: { available_cents: 500 } });
    for (const key of [demo.api_keys.manager, demo.api_keys.staff]) {
      const res = await request(t.app).post(path).set(auth(key)).send({ amount_cents: 1, reason: 'x' });
      expect([res.status, res.body.error]).toEqual([403, 'forbidden']);
    }
    for (const body of [
      { amount_cents: 0, reason: 'x' },
      { amount_cents: 1.5, reason: 'x' },
      { amount_cents: -2.5, reason: 'x' },
      { amount_cents: '5', reason: 'x' },
      { amount_cents: 100_000_001, reason: 'x' },
      { amount_cents: 5 },
      { amount_cents: 5, reason: '' },
      { amount_cents: 5, reason: 'x', lot: 'never' },
    ]) {
      const res = await request(t.app).post(path).set(auth(demo.api_keys.admin)).send(body);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_body');
    }
    const entries = await t.deps.db.walletEntry.findMany({ where: { walletId }, orderBy: { seq: 'asc' } });
    expect(entries.map((e) => [e.kind, e.balanceDelta, e.reason])).toEqual([
      ['adjustment', 800, 'goodwill'],
      ['adjustment', -300, 'fix'],
    ]);
    const ledger = await request(t.app).get(`/api/v1/wallets/${walletId}/entries`).set(auth(demo.api_keys.staff));
    const admin = await keyIdOf(t, demo.api_keys.admin);
    expect(ledger.body.data.map((e: { actor_user_id: string }) => e.actor_user_id)).toEqual([admin, admin]);
    // Adjustments have no catalogue event: the ledger entry is their record.
    expect(await t.deps.db.event.count({ where: { entityId: walletId } })).toBe(0);

    const key = `adjust-${randomUUID()}`;
    const retried = await Promise.all(
      [0, 1].map(() =>
        request(t.app).post(path).set(auth(demo.api_keys.admin)).set('Idempotency-Key', key).send({
          amount_cents: 200,
          reason: 'retried goodwill',
        }),
      ),
    );
    // At once, the second is told the first is still running; after it, it gets the same answer.
    const again = await request(t.app)
      .post(path)
      .set(auth(demo.api_keys.admin))
      .set('Idempotency-Key', key)
      .send({ amount_cents: 200, reason: 'retried goodwill' });
    expect(retried.map((r) => r.status).sort()).toEqual(expect.arrayContaining([201]));
    expect(again.status).toBe(201);
    expect(again.get('Idempotent-Replayed')).toBe('true');
    expect(again.body.balance_cents).toBe(700);
    expect(await t.deps.db.walletEntry.count({ where: { walletId, reason: 'retried goodwill' } })).toBe(1);

    const foreign = await openWallet(other);
    const res = await request(t.app)
      .post(`/api/v1/wallets/${foreign.walletId}/adjustments`)
      .set(auth(demo.api_keys.admin))
      .send({ amount_cents: 100, reason: 'x' });
    expect([res.status, res.body.error]).toEqual([404, 'wallet_not_found']);
    expect(await t.deps.db.walletEntry.count({ where: { walletId: foreign.walletId } })).toBe(0);
  });
});

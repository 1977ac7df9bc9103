import { randomUUID } from 'node:crypto';
import type { DemoTenant, Tx } from '@booking/db';
import { createTestApp, seedTenant, type TestApp } from '@booking/test-kit';
import { lockWallet, type LockedWallet } from '../src/locks';
import { expireWalletFunds } from '../src/wallets/expire-wallet-funds';
import { openWallet } from '../src/wallets/open-wallet';
import { creditWallet, holdWalletValue, releaseWalletHold } from '../src/wallets/wallet-ledger';

// The expiry job's use case on the real PostgreSQL: what expires (unheld value of lots past
// their expiry, nothing else), the event it records, and several runs at once on separate
// connection pools, as several worker pods run it.

let t: TestApp;
let demo: DemoTenant;

beforeAll(async () => {
  t = createTestApp();
  demo = await seedTenant(t.deps);
});
afterAll(() => t.close());

async function newWallet(): Promise<{ walletId: string; customerId: string }> {
  const customer = await t.deps.db.customer.create({
    data: { tenantId: demo.tenant.id, email: `expiry-${randomUUID()}@example.com`, firstName: 'Eve' },
  });
  const walletId = await t.deps.db.$transaction((tx) =>
    openWallet(tx, { tenantId: demo.tenant.id, customerId: customer.id, currency: 'USD' }),
  );
  return { walletId, customerId: customer.id };
}

async function withLocked<T>(walletId: string, work: (tx: Tx, wallet: LockedWallet) => Promise<T>): Promise<T> {
  return t.deps.db.$transaction(async (tx) =>
    work(tx, (await lockWallet(tx, { tenantId: demo.tenant.id }, walletId))!),
  );
}

const fund = (tx: Tx, wallet: LockedWallet, amountCents: number, expiresAt: Date | null) =>
  creditWallet(tx, wallet, { kind: 'fund', source: 'pos_load', amountCents, expiresAt });

const expiredEvents = (walletId: string) =>
  t.deps.db.event.findMany({ where: { entityId: walletId, name: 'wallet.expired' }, orderBy: { createdAt: 'asc' } });

const lotsOf = (walletId: string) =>
  t.deps.db.walletLot.findMany({ where: { walletId }, select: { id: true, remainingCents: true } });

/** What a lifecycle job does each tick: batches until one expires nothing (bounded here). */
async function runUntilDone(db: TestApp['deps']['db'], now?: Date): Promise<number> {
  for (let batches = 1; batches <= 50; batches += 1) {
    if ((await expireWalletFunds({ db }, now)) === 0) return batches;
  }
  throw new Error('the expiry job never ran out of work');
}

describe('wallet expiry', () => {
  it('when lots are past their expiry, then their remainder expires and wallet.expired names the wallet, customer, amount, balance and lots', async () => {
    const { walletId, customerId } = await newWallet();
    const past = new Date(Date.now() - 60_000);
    const lots = await withLocked(walletId, async (tx, wallet) => ({
      first: await fund(tx, wallet, 250, past),
      second: await fund(tx, wallet, 150, new Date(Date.now() - 30_000)),
      later: await fund(tx, wallet, 600, new Date(Date.now() + 86_400_000)),
    }));

    await runUntilDone(t.deps.db);

    const events = await expiredEvents(walletId);
    expect(events).toHaveLength(1);
    const { lot_ids: lotIds, ...fields } = events[0]!.data as { lot_ids: string[] };
    expect(fields).toMatchObject({
      wallet_id: walletId,
      customer_id: customerId,
      expired_cents: 400,
      currency: 'USD',
      balance_cents: 600,
    });
    expect([...lotIds].sort()).toEqual([lots.first.lotId, lots.second.lotId].sort());
    expect(events[0]).toMatchObject({ tenantId: demo.tenant.id, entityType: 'wallet', entityId: walletId });
    const remaining = new Map((await lotsOf(walletId)).map((lot) => [lot.id, lot.remainingCents]));
    expect(remaining.get(lots.later.lotId)).toBe(600);
    const [entry] = await t.deps.db.walletEntry.findMany({ where: { walletId, kind: 'expire' } });
    expect(entry).toMatchObject({ balanceDelta: -400, heldDelta: 0, balanceAfter: 600 });
  });

  it('when value past its expiry is held, then the hold covers it first (a capture would spend it), and it expires on a later run once released', async () => {
    const { walletId } = await newWallet();
    const past = new Date(Date.now() - 60_000);
    await withLocked(walletId, async (tx, wallet) => {
      await fund(tx, wallet, 400, past);
      await fund(tx, wallet, 600, null);
      // 500 held: capturing it would spend the expiring 400 first, so none of it may expire.
      await holdWalletValue(tx, wallet, 500, {});
    });
    await runUntilDone(t.deps.db);
    let events = await expiredEvents(walletId);
    expect(events).toEqual([]);

    await withLocked(walletId, async (tx, wallet) => {
      await releaseWalletHold(tx, wallet, 500, {});
      // 300 held now: 100 of the expired lot is no longer covered.
      await holdWalletValue(tx, wallet, 300, {});
    });
    await runUntilDone(t.deps.db);
    events = await expiredEvents(walletId);
    expect(events.map((e) => e.data)).toEqual([expect.objectContaining({ expired_cents: 100, balance_cents: 900 })]);

    await withLocked(walletId, (tx, wallet) => releaseWalletHold(tx, wallet, 300, {}));
    await runUntilDone(t.deps.db);
    events = await expiredEvents(walletId);
    expect(events.map((e) => (e.data as { expired_cents: number }).expired_cents)).toEqual([100, 300]);
    const wallet = await t.deps.db.wallet.findUniqueOrThrow({ where: { id: walletId } });
    expect(wallet).toMatchObject({ balanceCents: 600, heldCents: 0 });
  });

  it('when all the value past its expiry is held, then the job finds no work in it and a loop until done stops', async () => {
    const { walletId } = await newWallet();
    await withLocked(walletId, async (tx, wallet) => {
      await fund(tx, wallet, 500, new Date(Date.now() - 60_000));
      await holdWalletValue(tx, wallet, 500, {});
    });

    // Ends within the bound (it throws otherwise), however often it runs.
    await runUntilDone(t.deps.db);
    await runUntilDone(t.deps.db);

    expect(await expiredEvents(walletId)).toEqual([]);
    expect(await lotsOf(walletId)).toEqual([expect.objectContaining({ remainingCents: 500 })]);
  });

  it('when lots expire later than now, then nothing expires until the run that is past their expiry', async () => {
    const { walletId } = await newWallet();
    // Seconds ahead only: the later run expires every wallet's value due by then, not just this one's.
    const expiresAt = new Date(Date.now() + 5_000);
    await withLocked(walletId, (tx, wallet) => fund(tx, wallet, 300, expiresAt));

    await runUntilDone(t.deps.db);
    expect(await expiredEvents(walletId)).toEqual([]);

    await runUntilDone(t.deps.db, new Date(expiresAt.getTime() + 1));
    expect((await expiredEvents(walletId)).map((e) => e.data)).toEqual([
      expect.objectContaining({ expired_cents: 300, balance_cents: 0 }),
    ]);
  });

  it('when two expiry runs race (two worker pods, two connection pools), then each wallet expires once', async () => {
    const second = createTestApp();
    try {
      const wallets = await Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map(() => newWallet()));
      for (const { walletId } of wallets) {
        await withLocked(walletId, (tx, wallet) => fund(tx, wallet, 250, new Date(Date.now() - 1000)));
      }
      await Promise.all([runUntilDone(t.deps.db), runUntilDone(second.deps.db), runUntilDone(second.deps.db)]);
      for (const { walletId } of wallets) {
        expect(await expiredEvents(walletId)).toHaveLength(1);
        const wallet = await t.deps.db.wallet.findUniqueOrThrow({ where: { id: walletId } });
        expect(wallet.balanceCents).toBe(0);
        expect(await lotsOf(walletId)).toEqual([expect.objectContaining({ remainingCents: 0 })]);
      }
    } finally {
      await second.close();
    }
  });
});

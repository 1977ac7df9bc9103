import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { Client } from 'pg';
import type { DemoTenant, Tx } from '@booking/db';
import { AppError } from '@booking/domain';
import { createTestApp, seedTenant, type TestApp } from '@booking/test-kit';
import { lockWallet, type LockedWallet } from '../src/locks';
import { openWallet } from '../src/wallets/open-wallet';
import {
  availableCents,
  creditWallet,
  debitWallet,
  holdWalletValue,
  releaseWalletHold,
} from '../src/wallets/wallet-ledger';

// The wallet ledger against the real PostgreSQL: the code's rules and the database's (CHECKs,
// the entry trigger, the append-only ledger, the lots-match-balance check at commit).

let t: TestApp;
let demo: DemoTenant;

beforeAll(async () => {
  t = createTestApp();
  demo = await seedTenant(t.deps);
});
afterAll(() => t.close());

async function newWallet(): Promise<string> {
  const customer = await t.deps.db.customer.create({
    data: { tenantId: demo.tenant.id, email: `ledger-${randomUUID()}@example.com`, firstName: 'Lee' },
  });
  return t.deps.db.$transaction((tx) =>
    openWallet(tx, { tenantId: demo.tenant.id, customerId: customer.id, currency: 'USD' }),
  );
}

/** Runs `work` in a transaction on the wallet, locked as every use case locks it. */
async function withLocked<T>(walletId: string, work: (tx: Tx, wallet: LockedWallet) => Promise<T>): Promise<T> {
  return t.deps.db.$transaction(async (tx) =>
    work(tx, (await lockWallet(tx, { tenantId: demo.tenant.id }, walletId))!),
  );
}

/** The three views of a wallet's value that must always agree. */
async function sums(walletId: string) {
  const [row] = await t.deps.db.$queryRaw<
    { balance: number; held: number; entries: bigint; held_entries: bigint; lots: bigint }[]
  >`
    SELECT w.balance_cents AS balance, w.held_cents AS held,
           (SELECT COALESCE(SUM(balance_delta), 0) FROM wallet_entries WHERE wallet_id = w.id) AS entries,
           (SELECT COALESCE(SUM(held_delta), 0) FROM wallet_entries WHERE wallet_id = w.id) AS held_entries,
           (SELECT COALESCE(SUM(remaining_cents), 0) FROM wallet_lots WHERE wallet_id = w.id) AS lots
    FROM wallets w WHERE w.id = ${walletId}::uuid`;
  return {
    balance: row!.balance,
    held: row!.held,
    entries: Number(row!.entries),
    heldEntries: Number(row!.held_entries),
    lots: Number(row!.lots),
  };
}

type Op =
  | { kind: 'credit'; source: 'fund' | 'refund_credit' | 'adjustment'; amount: number; expiring: boolean }
  | { kind: 'hold' | 'funding_return' | 'adjust_down'; amount: number }
  // overreach: ask for more than is held, as only a buggy caller would; the ledger must refuse it.
  | { kind: 'release' | 'capture'; amount: number; overreach: boolean }
  | { kind: 'expire' };

const amount = fc.integer({ min: 1, max: 5000 });
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constant('credit' as const),
    source: fc.constantFrom('fund' as const, 'refund_credit' as const, 'adjustment' as const),
    amount,
    expiring: fc.boolean(),
  }),
  fc.record({ kind: fc.constantFrom('hold' as const, 'funding_return' as const, 'adjust_down' as const), amount }),
  fc.record({ kind: fc.constantFrom('release' as const, 'capture' as const), amount, overreach: fc.boolean() }),
  fc.record({ kind: fc.constant('expire' as const) }),
);

// Lots of the property test expire an hour from now and its expiry steps run as of then, so
// expiry runs of other test files (as of now) never touch these wallets between two steps.
const EXPIRY_RUN_AT = new Date(Date.now() + 3_600_000);

/** The expiry job's step for one locked wallet, as of EXPIRY_RUN_AT: what it takes, if anything. */
async function expireAsOfRun(tx: Tx, wallet: LockedWallet): Promise<number> {
  const [due] = await tx.$queryRaw<{ cents: bigint }[]>`
    SELECT COALESCE(SUM(remaining_cents), 0) AS cents FROM wallet_lots
    WHERE wallet_id = ${wallet.id}::uuid AND expires_at <= ${EXPIRY_RUN_AT}`;
  const amountCents = Math.min(Number(due!.cents), availableCents(wallet));
  if (amountCents > 0) {
    await debitWallet(tx, wallet, { kind: 'expire', amountCents, fromHold: false, expiredBy: EXPIRY_RUN_AT });
  }
  return amountCents;
}

/** Applies one step; returns the change it made to balance and hold (it throws when refused). */
async function apply(tx: Tx, wallet: LockedWallet, step: Op): Promise<{ balance: number; held: number }> {
  switch (step.kind) {
    case 'credit':
      await creditWallet(tx, wallet, {
        kind: step.source,
        source: step.source === 'fund' ? 'pos_load' : step.source,
        amountCents: step.amount,
        expiresAt: step.expiring ? EXPIRY_RUN_AT : null,
      });
      return { balance: step.amount, held: 0 };
    case 'hold':
      await holdWalletValue(tx, wallet, step.amount, {});
      return { balance: 0, held: step.amount };
    case 'release':
    case 'capture': {
      const amountCents = step.overreach ? wallet.heldCents + step.amount : Math.min(step.amount, wallet.heldCents);
      if (amountCents === 0) return { balance: 0, held: 0 };
      if (step.kind === 'release') {
        await releaseWalletHold(tx, wallet, amountCents, {});
        return { balance: 0, held: -amountCents };
      }
      await debitWallet(tx, wallet, { kind: 'capture', amountCents, fromHold: true });
      return { balance: -amountCents, held: -amountCents };
    }
    case 'funding_return':
    case 'adjust_down':
      await debitWallet(tx, wallet, {
        kind: step.kind === 'adjust_down' ? 'adjustment' : 'funding_return',
        amountCents: step.amount,
        fromHold: false,
      });
      return { balance: -step.amount, held: 0 };
    case 'expire':
      return { balance: -(await expireAsOfRun(tx, wallet)), held: 0 };
  }
}

/** Everything a step may write: a refused step must leave all of it as it was. */
async function footprint(walletId: string) {
  const [wallet, entries, lots] = await Promise.all([
    t.deps.db.wallet.findUniqueOrThrow({ where: { id: walletId }, select: { balanceCents: true, heldCents: true } }),
    t.deps.db.walletEntry.count({ where: { walletId } }),
    t.deps.db.walletLot.findMany({
      where: { walletId },
      select: { id: true, remainingCents: true },
      orderBy: { id: 'asc' },
    }),
  ]);
  return { wallet, entries, lots };
}

/** A refusal by the ledger's own checks (AppError, or a caller's bug) or by the database's. */
function isRefusal(error: unknown): boolean {
  if (error instanceof AppError) return error.code === 'insufficient_wallet_balance';
  return /wallets_balance_check|taken from a hold of/.test(String((error as Error).message));
}

describe('the wallet ledger', () => {
  it('when any sequence of fundings, holds, releases, captures, funding returns, adjustments and expiries runs, then balance = Σ entries = Σ lots, 0 <= held <= balance after every step, and a refused step leaves nothing behind', async () => {
    const seen = { expiries: 0, refusals: 0 };
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 15 }), async (ops) => {
        const walletId = await newWallet();
        const expected = { balance: 0, held: 0 };
        for (const step of ops) {
          const before = await footprint(walletId);
          try {
            const change = await withLocked(walletId, (tx, wallet) => apply(tx, wallet, step));
            if (step.kind === 'expire' && change.balance < 0) seen.expiries += 1;
            expected.balance += change.balance;
            expected.held += change.held;
          } catch (error) {
            if (!isRefusal(error)) throw error;
            seen.refusals += 1;
            expect(await footprint(walletId)).toEqual(before);
          }
          const s = await sums(walletId);
          expect(s).toEqual({
            balance: expected.balance,
            held: expected.held,
            entries: expected.balance,
            heldEntries: expected.held,
            lots: expected.balance,
          });
          expect(s.held).toBeGreaterThanOrEqual(0);
          expect(s.held).toBeLessThanOrEqual(s.balance);
        }
      }),
      { numRuns: 40, seed: 20261124 },
    );
    // The sequences did reach the interesting cases.
    expect(seen.expiries).toBeGreaterThan(0);
    expect(seen.refusals).toBeGreaterThan(0);
  });

  it('when code writes around the ledger, then the database refuses it: a direct balance change, an edited or deleted entry, an overdraft, a hold above the balance, an entry without its lot', async () => {
    const walletId = await newWallet();
    await withLocked(walletId, (tx, wallet) =>
      creditWallet(tx, wallet, { kind: 'fund', source: 'pos_load', amountCents: 500, expiresAt: null }),
    );
    const db = t.deps.db;
    await expect(db.$executeRaw`UPDATE wallets SET balance_cents = 9999 WHERE id = ${walletId}::uuid`).rejects.toThrow(
      /only through wallet_entries/,
    );
    await expect(
      db.$executeRaw`UPDATE wallet_entries SET reason = 'x' WHERE wallet_id = ${walletId}::uuid`,
    ).rejects.toThrow(/append-only/);
    await expect(db.$executeRaw`DELETE FROM wallet_entries WHERE wallet_id = ${walletId}::uuid`).rejects.toThrow(
      /append-only/,
    );
    const entry = (kind: string, balance: number, held: number) => db.$executeRaw`
      INSERT INTO wallet_entries (id, wallet_id, kind, balance_delta, held_delta)
      VALUES (${randomUUID()}::uuid, ${walletId}::uuid, ${kind}::wallet_entry_kind, ${balance}, ${held})`;
    await expect(entry('hold', 0, 501)).rejects.toThrow(/wallets_balance_check/);
    await expect(entry('capture', -501, 0)).rejects.toThrow(/wallets_balance_check/);
    // Value out of thin air: the entry alone passes its statement but not the commit.
    await expect(entry('adjustment', 100, 0)).rejects.toThrow(/differs from its lots/);
    expect(await sums(walletId)).toEqual({ balance: 500, held: 0, entries: 500, heldEntries: 0, lots: 500 });
  });

  it('when a lot is written or changed without a ledger entry, then its COMMIT is refused and the wallet is as it was', async () => {
    const walletId = await newWallet();
    await withLocked(walletId, (tx, wallet) =>
      creditWallet(tx, wallet, { kind: 'fund', source: 'pos_load', amountCents: 500, expiresAt: null }),
    );
    // Each write passes its statement; the check deferred to COMMIT refuses it.
    const raw = new Client({ connectionString: process.env.DATABASE_URL });
    await raw.connect();
    try {
      for (const write of [
        `INSERT INTO wallet_lots (id, wallet_id, source, amount_cents, remaining_cents)
         VALUES ('${randomUUID()}', '${walletId}', 'adjustment', 100, 100)`,
        `UPDATE wallet_lots SET remaining_cents = remaining_cents - 100 WHERE wallet_id = '${walletId}'`,
      ]) {
        await raw.query('BEGIN');
        await raw.query(write);
        await expect(raw.query('COMMIT')).rejects.toThrow(/differs from its lots/);
      }
    } finally {
      await raw.end();
    }
    expect(await sums(walletId)).toEqual({ balance: 500, held: 0, entries: 500, heldEntries: 0, lots: 500 });
  });

  it('when a wallet holds an admin credit that never expires and a top-up that does, then spending draws the top-up first, and a refund of the top-up still takes back its own lot', async () => {
    const walletId = await newWallet();
    const wallet = await t.deps.db.wallet.findUniqueOrThrow({ where: { id: walletId } });
    const topUp = await t.deps.db.order.create({
      data: {
        tenantId: demo.tenant.id,
        channel: 'online',
        kind: 'wallet_topup',
        status: 'paid',
        customerId: wallet.customerId,
        walletId,
        currency: 'USD',
        totalCents: 5_000,
        paidCents: 5_000,
      },
    });
    const expiresAt = new Date(Date.now() + 86_400_000);
    const lots = await withLocked(walletId, async (tx, locked) => ({
      topUp: await creditWallet(tx, locked, {
        kind: 'fund',
        source: 'online_topup',
        amountCents: 5_000,
        expiresAt,
        orderId: topUp.id,
      }),
      credit: await creditWallet(tx, locked, {
        kind: 'adjustment',
        source: 'adjustment',
        amountCents: 5_000,
        expiresAt: null,
      }),
    }));

    const spent = await withLocked(walletId, async (tx, locked) => {
      await holdWalletValue(tx, locked, 3_000, {});
      return debitWallet(tx, locked, { kind: 'capture', amountCents: 3_000, fromHold: true });
    });
    expect(spent.lotIds).toEqual([lots.topUp.lotId]);
    // The top-up's refund takes back what is left of its own lot before anything else.
    const returned = await withLocked(walletId, (tx, locked) =>
      debitWallet(tx, locked, { kind: 'funding_return', amountCents: 2_000, fromHold: false, preferOrderId: topUp.id }),
    );
    expect(returned.lotIds).toEqual([lots.topUp.lotId]);
    const remaining = await t.deps.db.walletLot.findMany({
      where: { walletId },
      select: { id: true, remainingCents: true },
    });
    expect(remaining).toEqual(
      expect.arrayContaining([
        { id: lots.topUp.lotId, remainingCents: 0 },
        { id: lots.credit.lotId, remainingCents: 5_000 },
      ]),
    );
  });

  it('when two transactions take the last value of one wallet at once (two holds, or two debits), then one is refused and the balance never goes below zero', async () => {
    const takeAll: Record<'hold' | 'debit', (tx: Tx, wallet: LockedWallet) => Promise<unknown>> = {
      hold: (tx, wallet) => holdWalletValue(tx, wallet, 1000, {}),
      debit: (tx, wallet) => debitWallet(tx, wallet, { kind: 'funding_return', amountCents: 1000, fromHold: false }),
    };
    for (const [way, take] of [...Object.entries(takeAll), ...Object.entries(takeAll)]) {
      const walletId = await newWallet();
      await withLocked(walletId, (tx, wallet) =>
        creditWallet(tx, wallet, { kind: 'fund', source: 'pos_load', amountCents: 1000, expiresAt: null }),
      );
      const outcomes = await Promise.allSettled([0, 1].map(() => withLocked(walletId, take)));
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      const refused = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
      expect((refused.reason as AppError).code).toBe('insufficient_wallet_balance');
      expect(await sums(walletId)).toEqual(
        way === 'hold'
          ? { balance: 1000, held: 1000, entries: 1000, heldEntries: 1000, lots: 1000 }
          : { balance: 0, held: 0, entries: 0, heldEntries: 0, lots: 0 },
      );
    }
  });
});

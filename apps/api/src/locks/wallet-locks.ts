import type { Tx } from '@booking/db';
import { claimLock } from './lock-order';
import { scopedTenant, type TenantScope } from './tenant-scope';

/**
 * A wallet locked for a change of its value. The ledger functions (wallets/wallet-ledger.ts)
 * keep `balanceCents` and `heldCents` current as they write entries.
 */
export interface LockedWallet {
  id: string;
  tenantId: string;
  customerId: string;
  currency: string;
  balanceCents: number;
  heldCents: number;
}

type Row = {
  id: string;
  tenant_id: string;
  customer_id: string;
  currency: string;
  balance_cents: number;
  held_cents: number;
};

const toLocked = (row: Row): LockedWallet => ({
  id: row.id,
  tenantId: row.tenant_id,
  customerId: row.customer_id,
  currency: row.currency,
  balanceCents: row.balance_cents,
  heldCents: row.held_cents,
});

/** Locks one wallet, so two tills, a refund and the expiry job change its value one at a time. */
export async function lockWallet(tx: Tx, scope: TenantScope, walletId: string): Promise<LockedWallet | undefined> {
  claimLock(tx, 'wallet', walletId);
  const tenantId = scopedTenant(scope);
  const [row] = await tx.$queryRaw<Row[]>`
    SELECT id, tenant_id, customer_id, currency, balance_cents, held_cents FROM wallets
    WHERE id = ${walletId}::uuid AND (${tenantId}::uuid IS NULL OR tenant_id = ${tenantId}::uuid)
    FOR UPDATE`;
  return row && toLocked(row);
}

/**
 * Locks several wallets of one order in id order, in one statement, so two orders spending the
 * same two wallets never wait on each other in a cycle.
 */
export async function lockWallets(tx: Tx, walletIds: readonly string[]): Promise<Map<string, LockedWallet>> {
  const ids = [...new Set(walletIds)].sort();
  if (ids.length === 0) return new Map();
  claimLock(tx, 'wallet');
  const rows = await tx.$queryRaw<Row[]>`
    SELECT id, tenant_id, customer_id, currency, balance_cents, held_cents FROM wallets
    WHERE id = ANY(${ids}::uuid[]) ORDER BY id FOR UPDATE`;
  return new Map(rows.map((row) => [row.id, toLocked(row)]));
}

/**
 * Locks the wallet of a customer's wallet row found by the expiry job, unless a till or a refund
 * holds it: the job leaves it to its next run.
 */
export async function lockWalletUnlessBusy(tx: Tx, walletId: string): Promise<LockedWallet | undefined> {
  claimLock(tx, 'wallet', walletId);
  const [row] = await tx.$queryRaw<Row[]>`
    SELECT id, tenant_id, customer_id, currency, balance_cents, held_cents FROM wallets
    WHERE id = ${walletId}::uuid FOR UPDATE SKIP LOCKED`;
  return row && toLocked(row);
}

import { randomUUID } from 'node:crypto';
import type { Tx } from '@booking/db';

type WalletKey = { tenantId: string; customerId: string; currency: string };

/**
 * The customer's wallet in a currency, made on first use: one per (tenant, customer, currency).
 * INSERT ... ON CONFLICT keeps two first fundings from failing each other, and only the one whose
 * row went in reports `created`. It takes no lock: callers lock the wallet (lockWallet) before
 * they change its value.
 */
export async function openOrFindWallet(tx: Tx, input: WalletKey): Promise<{ id: string; created: boolean }> {
  const inserted = await tx.$queryRaw<{ id: string }[]>`
    INSERT INTO wallets (id, tenant_id, customer_id, currency)
    VALUES (${randomUUID()}::uuid, ${input.tenantId}::uuid, ${input.customerId}::uuid, ${input.currency})
    ON CONFLICT (tenant_id, customer_id, currency) DO NOTHING
    RETURNING id`;
  if (inserted[0]) return { id: inserted[0].id, created: true };
  const wallet = await tx.wallet.findUniqueOrThrow({
    where: { tenantId_customerId_currency: input },
    select: { id: true },
  });
  return { id: wallet.id, created: false };
}

/** The id of the customer's wallet in a currency, made on first use (see openOrFindWallet). */
export async function openWallet(tx: Tx, input: WalletKey): Promise<string> {
  return (await openOrFindWallet(tx, input)).id;
}

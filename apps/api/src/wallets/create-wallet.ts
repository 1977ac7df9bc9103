import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import type { Operator } from '../operators/api-key-auth';
import { openOrFindWallet } from './open-wallet';
import type { CreateWalletRequest, WalletView } from './wallet-schemas';
import { loadWalletView } from './wallet-view';

/**
 * The customer's wallet in a currency, made if it does not exist yet (one per customer and
 * currency, so asking twice, even at once, is safe): `created` says which. It starts empty;
 * value comes from top-ups, till loads, refunds and admin adjustments.
 */
export async function createWallet(
  db: Db,
  operator: Operator,
  request: CreateWalletRequest,
): Promise<{ wallet: WalletView; created: boolean }> {
  return db.$transaction(async (tx) => {
    const customer = await tx.customer.findFirst({
      where: { id: request.customer_id, tenantId: operator.tenantId },
      select: { id: true },
    });
    if (!customer) throw new AppError('customer_not_found');
    const { id, created } = await openOrFindWallet(tx, {
      tenantId: operator.tenantId,
      customerId: customer.id,
      currency: request.currency,
    });
    return { wallet: await loadWalletView(tx, operator.tenantId, id), created };
  });
}

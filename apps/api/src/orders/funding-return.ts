import type { Tx } from '@booking/db';
import { recordEvent } from '@booking/events';
import type { LockedWallet } from '../locks';
import { debitWallet } from '../wallets/wallet-ledger';

/**
 * Takes back from a wallet the value a refunded purchase had funded, as far as it is still there,
 * and says so: wallet.funding_returned, and wallet.refund_review_required when part of it was
 * already spent (the shortfall, which the balance never goes below zero for). `fromHold`: the
 * debited value was held while the provider refunded the money.
 */
export async function returnFunding(
  tx: Tx,
  wallet: LockedWallet,
  funding: {
    orderId: string;
    refundId: string;
    amountCents: number;
    debitedCents: number;
    fromHold: boolean;
    channel: 'online' | 'pos';
    reason: 'refund' | 'dispute';
    actorKeyId?: string;
  },
): Promise<void> {
  if (funding.debitedCents > 0) {
    await debitWallet(tx, wallet, {
      kind: 'funding_return',
      amountCents: funding.debitedCents,
      fromHold: funding.fromHold,
      preferOrderId: funding.orderId,
      orderId: funding.orderId,
      refundId: funding.refundId,
      actorKeyId: funding.actorKeyId,
      reason: funding.reason,
    });
  }
  const shortfall = funding.amountCents - funding.debitedCents;
  await recordEvent(tx, {
    tenantId: wallet.tenantId,
    name: 'wallet.funding_returned',
    entityType: 'wallet',
    entityId: wallet.id,
    fields: {
      wallet_id: wallet.id,
      order_id: funding.orderId,
      refund_id: funding.refundId,
      amount_cents: funding.amountCents,
      debited_cents: funding.debitedCents,
      shortfall_cents: shortfall,
      currency: wallet.currency,
      balance_cents: wallet.balanceCents,
      channel: funding.channel,
      reason: funding.reason,
    },
  });
  if (shortfall > 0) {
    await recordEvent(tx, {
      tenantId: wallet.tenantId,
      name: 'wallet.refund_review_required',
      entityType: 'wallet',
      entityId: wallet.id,
      fields: {
        wallet_id: wallet.id,
        order_id: funding.orderId,
        refund_id: funding.refundId,
        amount_cents: funding.amountCents,
        debited_cents: funding.debitedCents,
        shortfall_cents: shortfall,
        currency: wallet.currency,
        reason: funding.reason,
      },
    });
  }
}

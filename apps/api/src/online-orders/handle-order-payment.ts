import type { Config } from '@booking/config';
import type { Db } from '@booking/db';
import { isUuid } from '@booking/domain';
import type { Logger } from '@booking/logging';
import type Stripe from 'stripe';
import { ANY_TENANT, lockOrder, lockWallet } from '../locks';
import { payMembershipOrder } from '../membership-sales/pay-membership-order';
import { recordFunded } from '../wallets/wallet-events';
import { creditWallet, fitsInWallet, fundsExpiry } from '../wallets/wallet-ledger';
import { refundLatePayment } from './refund-late-payment';
import { refuseOrderPayment } from './refuse-order-payment';

type Deps = { db: Db; config: Config; stripe: Stripe; logger?: Pick<Logger, 'warn'> };

/**
 * `payment_intent.succeeded` for an online order: the order is paid and its wallet funded (a
 * membership order's membership is activated instead, see payMembershipOrder),
 * exactly once however often and however concurrently the provider notifies. An exact
 * duplicate stops at provider_events (insert-first); another event about the same payment waits
 * on the order lock and then finds it paid.
 *
 * A payment the order cannot keep (it came after the order was cancelled, or it does not match
 * the order) is never kept: the order is marked for review and the payment refunded after the
 * commit (refundLatePayment). If asking for that refund fails we answer 500, the provider
 * notifies again, and the redelivery retries it.
 */
export async function handleOrderPaymentSucceeded(
  deps: Deps,
  eventId: string,
  intent: Stripe.PaymentIntent,
): Promise<void> {
  const orderId = intent.metadata?.order_id;
  // Someone else's PaymentIntent on the account may carry any metadata: not an order of ours.
  if (!orderId || !isUuid(orderId)) return;
  const paidCents = intent.amount_received || intent.amount;

  const refund = await deps.db.$transaction(async (tx) => {
    const first = await tx.$executeRaw`
      INSERT INTO provider_events (id, type) VALUES (${eventId}, 'payment_intent.succeeded') ON CONFLICT (id) DO NOTHING`;
    // The notification is authenticated by its signature; the order names its own tenant.
    const order = await lockOrder(tx, ANY_TENANT, orderId);
    if (!order || order.channel !== 'online' || intent.metadata?.tenant_id !== order.tenantId) return false;
    // Its PaymentIntent is stored after the provider answered; a very quick payment may come first.
    if (order.paymentIntentId !== null && order.paymentIntentId !== intent.id) return false;
    // Seen before: this very event, or another about the payment, which was refused (it set the
    // review reason) and must not be refused again: that would overwrite a later reason, such as
    // its refund having failed.
    const seen = first === 0 || order.reviewReason !== null;
    // A fixed-term membership's payment activates it instead of funding a wallet.
    if (order.kind === 'membership') return payMembershipOrder(tx, order, intent, paidCents, seen);
    // A refused payment: refundLatePayment knows whether its refund is still to be asked for.
    if (seen || order.status === 'paid') return order.reviewReason !== null;

    const matches = paidCents === order.totalCents && intent.currency.toUpperCase() === order.currency;
    const wallet = order.walletId ? await lockWallet(tx, ANY_TENANT, order.walletId) : undefined;
    // Value that would take the wallet past its cap cannot be kept: it is given back instead.
    const fits = wallet !== undefined && fitsInWallet(wallet, paidCents);
    if (order.status !== 'pending_payment' || !matches || !fits) {
      // Its payment is given back; an order waiting for it ends, and subscribers learn it will not be paid.
      await refuseOrderPayment(tx, order, {
        intentId: intent.id,
        paidCents,
        matches,
        refusal: 'wallet_limit_exceeded',
        at: new Date(),
      });
      return true;
    }

    const paidAt = new Date();
    await tx.order.update({
      where: { id: order.id },
      data: { status: 'paid', paidCents, paidAt, paymentIntentId: intent.id },
    });
    const expiresAt = fundsExpiry(paidAt, deps.config.wallets.fundsExpiryDays);
    const { lotId } = await creditWallet(tx, wallet, {
      kind: 'fund',
      source: 'online_topup',
      amountCents: paidCents,
      expiresAt,
      orderId: order.id,
    });
    await recordFunded(tx, wallet, { orderId: order.id, lotId, amountCents: paidCents, expiresAt, channel: 'online' });
    return false;
  });

  if (refund) await refundLatePayment(deps, orderId, intent.id);
}

import { randomUUID } from 'node:crypto';
import type { Config } from '@booking/config';
import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import { recordEvent } from '@booking/events';
import { signToken } from '@booking/signing';
import type Stripe from 'stripe';
import { upsertBookingCustomer } from '../customers/upsert-booking-customer';
import { providerCall } from '../payments/provider-call';
import { openWallet } from '../wallets/open-wallet';
import { WALLET_MAX_BALANCE_CENTS } from '../wallets/wallet-ledger';
import type { WalletTopupRequest, WalletTopupResponse } from './online-order-schemas';
import { normaliseEmail } from '../customers/customer-email';

/** The PaymentIntent metadata `purpose` of an online order's payment. */
export const ONLINE_ORDER_PURPOSE = 'wallet_topup';

/**
 * An anonymous wallet top-up: the buyer's customer and wallet, an order awaiting payment, and
 * the PaymentIntent that pays it.
 *
 * Three steps, so no row lock waits on the provider: the order is written first (without an
 * event), then the PaymentIntent is created with an idempotency key derived from the order id
 * (never from the client, so two orders never share a payment), then the order learns its
 * PaymentIntent and order.created is recorded. If the provider fails, the order stays without
 * a PaymentIntent and without an event, and the unpaid-order job cancels it silently.
 */
export async function createWalletTopup(
  deps: { db: Db; config: Config; stripe: Stripe | null },
  request: WalletTopupRequest,
): Promise<WalletTopupResponse> {
  const { db, config, stripe } = deps;
  if (!stripe) throw new AppError('payments_not_configured', 'STRIPE_SECRET_KEY is not set');
  const tenant = await db.tenant.findFirst({ where: { slug: request.tenant, published: true }, select: { id: true } });
  if (!tenant) throw new AppError('tenant_not_found');

  const orderId = randomUUID();
  const payBy = new Date(Date.now() + config.orders.payMinutes * 60_000);
  const { customerId, walletId } = await db.$transaction(async (tx) => {
    const email = normaliseEmail(request.customer.email);
    const customerId = await upsertBookingCustomer(
      tx,
      tenant.id,
      email,
      { firstName: request.customer.first_name, lastName: request.customer.last_name, phone: request.customer.phone },
      'order',
    );
    const walletId = await openWallet(tx, { tenantId: tenant.id, customerId, currency: request.currency });
    // Checked again when the payment lands (a payment that no longer fits is given back).
    const { balanceCents } = await tx.wallet.findUniqueOrThrow({ where: { id: walletId } });
    if (balanceCents + request.amount_cents > WALLET_MAX_BALANCE_CENTS) {
      throw new AppError('wallet_limit_exceeded', {
        max_balance_cents: WALLET_MAX_BALANCE_CENTS,
        balance_cents: balanceCents,
      });
    }
    await tx.order.create({
      data: {
        id: orderId,
        tenantId: tenant.id,
        channel: 'online',
        kind: 'wallet_topup',
        status: 'pending_payment',
        customerId,
        walletId,
        currency: request.currency,
        totalCents: request.amount_cents,
        payBy,
      },
    });
    return { customerId, walletId };
  });

  const intent = await providerCall(() =>
    stripe.paymentIntents.create(
      {
        amount: request.amount_cents,
        currency: request.currency.toLowerCase(),
        automatic_payment_methods: { enabled: true },
        metadata: { tenant_id: tenant.id, order_id: orderId, purpose: ONLINE_ORDER_PURPOSE },
      },
      { idempotencyKey: `order-${orderId}-payment-intent` },
    ),
  );

  await db.$transaction(async (tx) => {
    await tx.order.update({ where: { id: orderId }, data: { paymentIntentId: intent.id } });
    await recordEvent(tx, {
      tenantId: tenant.id,
      name: 'order.created',
      entityType: 'order',
      entityId: orderId,
      fields: {
        order_id: orderId,
        kind: 'wallet_topup',
        customer_id: customerId,
        amount_cents: request.amount_cents,
        currency: request.currency,
        payment_intent_id: intent.id,
        subscription_id: null,
        wallet_id: walletId,
        membership_id: null,
        plan_id: null,
        pay_by: payBy.toISOString(),
      },
    });
  });

  return {
    order_id: orderId,
    status: 'pending_payment',
    amount_cents: request.amount_cents,
    currency: request.currency,
    customer_id: customerId,
    wallet_id: walletId,
    payment_intent_id: intent.id,
    client_secret: intent.client_secret!,
    publishable_key: config.stripe.publishableKey,
    order_token: signToken(config.tokenSigningSecret, 'order', {
      subject: orderId,
      tenantId: tenant.id,
      ttlSeconds: config.bookingTokenTtlSeconds,
    }),
    pay_by: payBy.toISOString(),
  };
}

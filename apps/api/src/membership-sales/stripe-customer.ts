import type { Db } from '@booking/db';
import type Stripe from 'stripe';
import { providerCall } from '../payments/provider-call';

/**
 * The Stripe Customer that pays a customer's recurring memberships: the one stored on the
 * customer, or a new one made with an idempotency key derived from the customer id (so two
 * purchases at once make one) and stored where none is yet.
 */
export async function ensureStripeCustomer(deps: { db: Db; stripe: Stripe }, customerId: string): Promise<string> {
  const customer = await deps.db.customer.findUniqueOrThrow({ where: { id: customerId } });
  if (customer.stripeCustomerId) return customer.stripeCustomerId;
  const name = [customer.firstName, customer.lastName].filter(Boolean).join(' ');
  const created = await providerCall(() =>
    deps.stripe.customers.create(
      { email: customer.email, name, metadata: { tenant_id: customer.tenantId, customer_id: customer.id } },
      { idempotencyKey: `customer-${customer.id}` },
    ),
  );
  await deps.db.customer.updateMany({
    where: { id: customer.id, stripeCustomerId: null },
    data: { stripeCustomerId: created.id },
  });
  const stored = await deps.db.customer.findUniqueOrThrow({ where: { id: customer.id } });
  return stored.stripeCustomerId!;
}

import { Prisma, type Db } from '@booking/db';
import { AppError } from '@booking/domain';
import { recordEvent } from '@booking/events';
import { lockCustomer } from '../locks';
import type { Operator } from '../operators/api-key-auth';
import { normaliseEmail } from './customer-email';
import type { Customer, UpdateCustomerRequest } from './customer-schemas';
import { customerView, withBookingCount } from './customer-view';

type Current = Awaited<ReturnType<typeof lockCustomer>>;

const sameSet = (a: string[], b: string[]) => a.length === b.length && b.every((tag) => a.includes(tag));

/** The request's fields whose values differ from the customer's, in a fixed order. */
function changedFields(current: Current, update: UpdateCustomerRequest & { email?: string }): string[] {
  return [
    update.email !== undefined && update.email !== current.email && 'email',
    update.first_name !== undefined && update.first_name !== current.firstName && 'first_name',
    update.last_name !== undefined && update.last_name !== current.lastName && 'last_name',
    update.phone !== undefined && update.phone !== current.phone && 'phone',
    update.tags !== undefined && !sameSet(update.tags, current.tags) && 'tags',
    update.marketing_opt_in !== undefined && update.marketing_opt_in !== current.marketingOptIn && 'marketing_opt_in',
  ].filter((field): field is string => field !== false);
}

/**
 * An operator's correction of a customer's contact data, tags or marketing preference. Only
 * actual changes are written and recorded as customer.updated (same shape as a booking's
 * update); an anonymised customer can no longer be changed, and an email belongs to one
 * customer of the tenant.
 */
export async function updateCustomer(
  db: Db,
  operator: Operator,
  customerId: string,
  request: UpdateCustomerRequest,
): Promise<Customer> {
  // Stored like a booking stores it, so bookings by this address find this customer.
  const update = { ...request, email: request.email === undefined ? undefined : normaliseEmail(request.email) };
  try {
    return await db.$transaction(async (tx) => {
      const current = await lockCustomer(tx, operator.tenantId, customerId);
      if (current.anonymisedAt) throw new AppError('customer_anonymised');

      const changed = changedFields(current, update);
      if (changed.length === 0) {
        return customerView(
          await tx.customer.findUniqueOrThrow({ where: { id: customerId }, include: withBookingCount }),
        );
      }
      if (changed.includes('email')) {
        const owner = await tx.customer.findFirst({
          where: { tenantId: operator.tenantId, email: update.email, id: { not: customerId } },
          select: { id: true },
        });
        if (owner) throw new AppError('customer_email_taken');
      }
      const updated = await tx.customer.update({
        where: { id: customerId },
        data: {
          email: update.email,
          firstName: update.first_name,
          lastName: update.last_name,
          phone: update.phone,
          tags: changed.includes('tags') ? update.tags : undefined,
          marketingOptIn: update.marketing_opt_in,
        },
        include: withBookingCount,
      });
      await recordEvent(tx, {
        tenantId: operator.tenantId,
        name: 'customer.updated',
        entityType: 'customer',
        entityId: customerId,
        fields: { customer_id: customerId, changed_fields: changed },
      });
      return customerView(updated);
    });
  } catch (error) {
    // A booking or another update took the address between our check and our write.
    if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002')
      throw new AppError('customer_email_taken');
    throw error;
  }
}

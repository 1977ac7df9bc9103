import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import { lockCustomer } from '../locks';
import type { Operator } from '../operators/api-key-auth';
import type { Customer } from './customer-schemas';
import { customerView, withBookingCount } from './customer-view';

/**
 * A placeholder that keeps (tenant, email) unique and that no booking can use: the booking
 * request's email format needs a dot in the domain, and `invalid` is reserved (RFC 2606).
 */
export const anonymisedEmail = (customerId: string) => `anonymised+${customerId}@invalid`;

/**
 * Erases a customer's personal data for good. The row stays, so its bookings keep their
 * customer; a later booking by the old address makes a new customer. Anonymised customers never
 * emit, so the erasure itself records no event.
 */
export async function anonymiseCustomer(db: Db, operator: Operator, customerId: string): Promise<Customer> {
  return db.$transaction(async (tx) => {
    const current = await lockCustomer(tx, operator.tenantId, customerId);
    if (current.anonymisedAt) throw new AppError('customer_anonymised');
    const anonymised = await tx.customer.update({
      where: { id: customerId },
      data: {
        email: anonymisedEmail(customerId),
        firstName: 'Anonymised',
        lastName: null,
        phone: null,
        tags: [],
        marketingOptIn: false,
        anonymisedAt: new Date(),
      },
      include: withBookingCount,
    });
    return customerView(anonymised);
  });
}

import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import { lockCustomer, lockMembership } from '../locks';
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
 * customer; a later booking by the old address makes a new customer. The holder photos showing
 * the customer go too, in the same transaction: the memberships they hold have no current photo
 * any more (a plan that requires one is not used until a new one is captured). Anonymised
 * customers never emit, so the erasure itself records no event. Signed waivers are kept as they
 * were signed (legal evidence).
 */
export async function anonymiseCustomer(db: Db, operator: Operator, customerId: string): Promise<Customer> {
  return db.$transaction(async (tx) => {
    // Lock order membership → customer: the memberships the customer holds, so no photo of them
    // is captured while they are erased.
    const held = await tx.membership.findMany({
      where: { tenantId: operator.tenantId, holderCustomerId: customerId },
      select: { id: true },
      orderBy: { id: 'asc' },
    });
    for (const { id } of held) await lockMembership(tx, { tenantId: operator.tenantId }, id);
    const current = await lockCustomer(tx, operator.tenantId, customerId);
    if (current.anonymisedAt) throw new AppError('customer_anonymised');
    // A photo is current only while the customer it shows holds the membership (a holder change
    // clears it), so these are all the memberships showing one.
    await tx.membership.updateMany({
      where: { tenantId: operator.tenantId, holderCustomerId: customerId, holderPhotoId: { not: null } },
      data: { holderPhotoId: null },
    });
    await tx.membershipPhoto.deleteMany({ where: { holderCustomerId: customerId } });
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

import type { Db, Tx } from '@booking/db';
import { AppError, assertMembershipAllows } from '@booking/domain';
import { recordEvent } from '@booking/events';
import { normaliseEmail } from '../customers/customer-email';
import { upsertBookingCustomer } from '../customers/upsert-booking-customer';
import { lockCustomer, lockMembership } from '../locks';
import { membershipRef } from '../memberships/membership-ref';
import { membershipSummary } from '../memberships/membership-view';
import type { Operator } from '../operators/api-key-auth';
import type { ChangeHolderRequest } from './holder-schemas';

/**
 * The customer the request names if it exists already, without writing anything: the
 * customer_id's (locked; 404 customer_not_found, 409 customer_anonymised), or the tenant's
 * customer with the contact's email (read only; none when it is a new address).
 */
async function namedCustomerId(tx: Tx, tenantId: string, request: ChangeHolderRequest): Promise<string | undefined> {
  if (request.customer_id !== undefined) {
    const customer = await lockCustomer(tx, tenantId, request.customer_id);
    if (customer.anonymisedAt) throw new AppError('customer_anonymised');
    return customer.id;
  }
  const email = normaliseEmail(request.customer!.email);
  const customer = await tx.customer.findUnique({
    where: { tenantId_email: { tenantId, email } },
    select: { id: true },
  });
  return customer?.id;
}

/** The customer for a contact, made if new or refreshed with its name and phone. */
function contactCustomerId(tx: Tx, tenantId: string, contact: NonNullable<ChangeHolderRequest['customer']>) {
  return upsertBookingCustomer(
    tx,
    tenantId,
    contact.email,
    { firstName: contact.first_name, lastName: contact.last_name, phone: contact.phone },
    'transfer',
  );
}

/**
 * A manager gives a transferable membership to another holder (the owner, who pays, stays). The
 * member token version goes up, so the previous holder's token no longer uses the membership,
 * and the holder photo is cleared (it showed the previous holder). Records
 * membership.holder_changed. Naming the current holder again (by id, or by contact with any
 * case of their email) changes nothing and records nothing: it is recognised before any write, so
 * a different name or phone in the contact does not update the holder either.
 */
export async function changeHolder(db: Db, operator: Operator, membershipId: string, request: ChangeHolderRequest) {
  if ((request.customer === undefined) === (request.customer_id === undefined)) {
    throw new AppError('invalid_body', [{ field: '/', message: 'must have exactly one of customer and customer_id' }]);
  }
  return db.$transaction(async (tx) => {
    const membership = await lockMembership(tx, { tenantId: operator.tenantId }, membershipId);
    if (!membership) throw new AppError('membership_not_found');
    if (!membership.plan.transferable) throw new AppError('membership_not_transferable');
    assertMembershipAllows(membership.status, 'changeHolder');
    const named = await namedCustomerId(tx, operator.tenantId, request);
    if (named === membership.holderCustomerId) return membershipSummary(membership);
    const holderId = request.customer ? await contactCustomerId(tx, operator.tenantId, request.customer) : named!;
    // The read above can miss the holder whose email became the contact's since: still the same.
    if (holderId === membership.holderCustomerId) return membershipSummary(membership);

    const changed = await tx.membership.update({
      where: { id: membership.id },
      data: { holderCustomerId: holderId, tokenVersion: { increment: 1 }, holderPhotoId: null },
    });
    await recordEvent(tx, {
      tenantId: membership.tenantId,
      name: 'membership.holder_changed',
      entityType: 'membership',
      entityId: membership.id,
      fields: {
        ...membershipRef(changed),
        previous_holder_customer_id: membership.holderCustomerId,
        reason: request.reason ?? null,
        actor_user_id: operator.keyId,
      },
    });
    return membershipSummary(changed);
  });
}

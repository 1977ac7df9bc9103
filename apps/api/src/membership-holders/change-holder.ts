import type { Db, Tx } from '@booking/db';
import { AppError, assertMembershipAllows } from '@booking/domain';
import { recordEvent } from '@booking/events';
import { upsertBookingCustomer } from '../customers/upsert-booking-customer';
import { lockCustomer, lockMembership } from '../locks';
import { membershipRef } from '../memberships/membership-ref';
import { membershipSummary } from '../memberships/membership-view';
import type { Operator } from '../operators/api-key-auth';
import type { ChangeHolderRequest } from './holder-schemas';

/** The new holder: an existing customer of the tenant, or the one for a contact (made if new). */
async function newHolderId(tx: Tx, tenantId: string, request: ChangeHolderRequest): Promise<string> {
  if (request.customer_id !== undefined) {
    const customer = await lockCustomer(tx, tenantId, request.customer_id);
    if (!customer) throw new AppError('customer_not_found');
    if (customer.anonymisedAt) throw new AppError('customer_anonymised');
    return customer.id;
  }
  const contact = request.customer!;
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
 * membership.holder_changed; naming the current holder again changes nothing.
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
    const holderId = await newHolderId(tx, operator.tenantId, request);
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

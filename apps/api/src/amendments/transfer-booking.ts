import type { Config } from '@booking/config';
import type { Db } from '@booking/db';
import { AppError, assertBookingAllows } from '@booking/domain';
import { bookingEventSubject, recordEvent } from '@booking/events';
import { manageToken, waiverUrl } from '../bookings/booking-links';
import { upsertBookingCustomer } from '../customers/upsert-booking-customer';
import { lockBooking } from '../locks';
import type { Operator } from '../operators/api-key-auth';
import { supersedeSignatures } from '../waivers/current-signatures';
import type { TransferRequest, TransferResponse } from './amendment-schemas';
import { normaliseEmail } from '../customers/customer-email';

/**
 * Re-attributes a confirmed booking to another customer of the tenant, found or made by email
 * (which records customer.created / customer.updated as a booking would). Later booking events,
 * and so later messages, carry the new customer's email. Seats and payment are unchanged. The
 * previous customer's manage and waiver links stop working; the answer carries the new
 * customer's, for the operator to send on. The waiver signatures of the previous party are
 * superseded: kept as evidence, but the new party signs for its own guests.
 */
export async function transferBooking(
  deps: { db: Db; config: Config },
  operator: Operator,
  bookingId: string,
  request: TransferRequest,
): Promise<TransferResponse> {
  const email = normaliseEmail(request.customer.email);
  return deps.db.$transaction(async (tx) => {
    const booking = await lockBooking(tx, bookingId, { tenantId: operator.tenantId });
    assertBookingAllows(booking.status, 'amend');
    if (email === booking.customerEmail.toLowerCase()) {
      throw new AppError('invalid_body', [
        { field: '/customer/email', message: 'is already the customer of the booking' },
      ]);
    }
    const existing = await tx.customer.findUnique({
      where: { tenantId_email: { tenantId: operator.tenantId, email } },
      select: { anonymisedAt: true },
    });
    if (existing?.anonymisedAt) throw new AppError('customer_anonymised', 'that customer has been anonymised');

    const customerId = await upsertBookingCustomer(
      tx,
      operator.tenantId,
      email,
      { firstName: request.customer.first_name, lastName: request.customer.last_name, phone: request.customer.phone },
      'transfer',
    );
    await tx.booking.update({ where: { id: bookingId }, data: { customerId } });
    const amendment = await tx.bookingAmendment.create({
      data: {
        tenantId: operator.tenantId,
        bookingId,
        kind: 'transfer',
        fromCustomerId: booking.customerId,
        toCustomerId: customerId,
        reason: request.reason,
        actorKeyId: operator.keyId,
      },
      select: { id: true, createdAt: true },
    });
    await supersedeSignatures(tx, { bookingId, amendmentId: amendment.id, at: amendment.createdAt });
    await recordEvent(tx, {
      tenantId: operator.tenantId,
      name: 'booking.transferred',
      entityType: 'booking',
      entityId: bookingId,
      fields: {
        ...bookingEventSubject({ ...booking, customerEmail: email }),
        to_email: email,
        transferred_by_user: operator.keyId,
        reason: request.reason,
      },
    });
    const customer = await tx.customer.findUniqueOrThrow({ where: { id: customerId } });
    const slot = await tx.slot.findUniqueOrThrow({ where: { id: booking.slotId }, select: { endsAt: true } });
    const linked = { id: bookingId, tenantId: operator.tenantId, customerId };
    return {
      booking_id: bookingId,
      customer: {
        id: customer.id,
        email: customer.email,
        first_name: customer.firstName,
        last_name: customer.lastName,
        phone: customer.phone,
      },
      manage_token: manageToken(deps.config, linked, slot.endsAt),
      waiver_url: booking.requiresWaiver ? waiverUrl(deps.config, linked, slot.endsAt) : null,
    };
  });
}

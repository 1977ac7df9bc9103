import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import { customerView, withBookingCount } from './customer-view';

const RECENT_BOOKINGS = 50;

/** One customer of the tenant with its most recent bookings, newest first. */
export async function getCustomer(db: Db, tenantId: string, customerId: string) {
  const customer = await db.customer.findFirst({
    where: { id: customerId, tenantId },
    include: {
      ...withBookingCount,
      bookings: {
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        take: RECENT_BOOKINGS,
        include: { slot: { select: { startsAt: true } } },
      },
    },
  });
  if (!customer) throw new AppError('customer_not_found');
  return {
    ...customerView(customer),
    bookings: customer.bookings.map((booking) => ({
      booking_id: booking.id,
      status: booking.status,
      slot_starts_at: booking.slot.startsAt.toISOString(),
      experience_id: booking.experienceId,
      total_cents: booking.totalCents,
      currency: booking.currency,
    })),
  };
}

import { AppError } from '@booking/domain';
import type { Request } from 'express';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The `:id` of a booking route; an id that is not a uuid names no booking. */
export function bookingIdParam(req: Request): string {
  const id = String(req.params.id);
  if (!UUID.test(id)) throw new AppError('booking_not_found');
  return id;
}

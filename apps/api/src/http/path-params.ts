import { AppError, isUuid, type ErrorCode } from '@booking/domain';
import type { Request } from 'express';

/**
 * The `:id` (or another id parameter) of a route, in lower case as bodies' uuids are (see
 * canonical-uuids); an id that is not a uuid names nothing, so it is `notFound`.
 */
export function idParam(req: Request, notFound: ErrorCode, name = 'id'): string {
  const id = String(req.params[name]);
  if (!isUuid(id)) throw new AppError(notFound);
  return id.toLowerCase();
}

export const bookingIdParam = (req: Request) => idParam(req, 'booking_not_found');

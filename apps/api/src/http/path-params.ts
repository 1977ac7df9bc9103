import { AppError, isUuid, type ErrorCode } from '@booking/domain';
import type { Request } from 'express';

/**
 * A path parameter as given, in lower case as bodies' uuids are (see canonical-uuids): the form
 * tokens are signed for and per-client keys are made of, whatever case the client printed it in.
 */
export function pathId(req: Request, name = 'id'): string {
  return String(req.params[name]).toLowerCase();
}

/**
 * The `:id` (or another id parameter) of a route, in lower case (pathId); an id that is not a
 * uuid names nothing, so it is `notFound`.
 */
export function idParam(req: Request, notFound: ErrorCode, name = 'id'): string {
  const id = pathId(req, name);
  if (!isUuid(id)) throw new AppError(notFound);
  return id;
}

export const bookingIdParam = (req: Request) => idParam(req, 'booking_not_found');

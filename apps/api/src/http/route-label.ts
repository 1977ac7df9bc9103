import type { Request } from 'express';

/** The label of requests no route took (404s): one value, so unknown paths add no series. */
export const UNMATCHED = 'unmatched';

/**
 * The route template a request took (`/api/bookings/:id`), never its path, so a label's values
 * are bounded by the routes there are. Under a mounted router without routes of its own (the
 * API docs' static files) it is the mount path.
 */
export function routeLabel(req: Request): string {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  if (typeof path === 'string') return req.baseUrl + path;
  return req.baseUrl || UNMATCHED;
}

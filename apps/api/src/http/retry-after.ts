import type { Response } from 'express';

/**
 * Seconds a client is asked to wait before it tries a 503 `service_unavailable` again. Each such
 * 503 is a passing state: a backend briefly away, a replica too loaded to answer by the request
 * deadline, a replica draining out of rotation, terms that changed under a booking. A second
 * later the retry usually meets another replica or another moment; a client that backs off
 * further on 503s in a row is welcome to.
 */
export const SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS = 1;

export function askToRetryLater(res: Response): void {
  res.setHeader('Retry-After', String(SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS));
}

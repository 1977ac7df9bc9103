import type { ErrorCode } from '@booking/domain';

/** The one table from error code to HTTP status. TypeScript insists every code is here. */
export const ERROR_STATUSES: Record<ErrorCode, number> = {
  invalid_body: 400,
  invalid_query: 400,
  invalid_guest_count: 400,
  experience_slot_mismatch: 400,
  addon_invalid: 400,
  addon_not_found: 400,
  invalid_idempotency_key: 400,
  not_found: 404,
  experience_not_found: 404,
  slot_not_found: 404,
  hold_not_found: 404,
  insufficient_capacity: 409,
  capacity_exceeded: 409,
  slot_unavailable: 409,
  idempotency_request_in_progress: 409,
  hold_expired: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_key_reused: 422,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
};

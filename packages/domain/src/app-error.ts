/**
 * Every error code the service answers with. The spec names most of them; the rest fill in
 * what it leaves "not shown" and are documented in docs/errors.md.
 */
export type ErrorCode =
  // 400
  | 'invalid_body'
  | 'invalid_query'
  | 'invalid_path'
  | 'invalid_guest_count'
  | 'experience_slot_mismatch'
  | 'addon_invalid'
  | 'addon_not_found'
  | 'invalid_idempotency_key'
  | 'gift_card_not_found'
  | 'gift_card_currency_mismatch'
  | 'gift_card_empty'
  | 'invalid_signature'
  | 'invalid_webhook_url'
  | 'refund_exceeds_paid'
  | 'payment_reference_invalid'
  | 'payment_amount_mismatch'
  | 'wallet_currency_mismatch'
  | 'wallet_token_invalid'
  | 'tenders_exceed_total'
  | 'tender_not_refundable'
  | 'plan_invalid'
  | 'member_token_invalid'
  // 401, 403
  | 'unauthorized'
  | 'invalid_token'
  | 'token_expired'
  | 'forbidden'
  // 404
  | 'not_found'
  | 'experience_not_found'
  | 'slot_not_found'
  | 'hold_not_found'
  | 'booking_not_found'
  | 'refund_not_found'
  | 'webhook_endpoint_not_found'
  | 'webhook_delivery_not_found'
  | 'customer_not_found'
  | 'waiver_not_found'
  | 'shift_not_found'
  | 'venue_not_found'
  | 'tenant_not_found'
  | 'wallet_not_found'
  | 'wallet_token_not_found'
  | 'order_not_found'
  | 'tender_not_found'
  | 'membership_plan_not_found'
  | 'membership_not_found'
  | 'benefit_not_found'
  | 'freeze_not_found'
  | 'change_not_found'
  | 'photo_not_found'
  // 409
  | 'insufficient_capacity'
  | 'capacity_exceeded'
  | 'slot_unavailable'
  | 'idempotency_request_in_progress'
  | 'booking_not_payable'
  | 'booking_not_cancellable'
  | 'booking_not_checkable'
  | 'webhook_endpoint_disabled'
  | 'booking_not_refundable'
  | 'booking_not_amendable'
  | 'customer_anonymised'
  | 'customer_email_taken'
  | 'waiver_not_required'
  | 'shift_already_open'
  | 'shift_closed'
  | 'payment_reference_used'
  | 'wallet_token_revoked'
  | 'insufficient_wallet_balance'
  | 'insufficient_gift_card_balance'
  | 'order_not_open'
  | 'order_not_fully_paid'
  | 'order_not_refundable'
  | 'wallet_load_unpaid'
  | 'membership_unpaid'
  | 'refund_exceeds_available'
  | 'wallet_limit_exceeded'
  | 'refund_in_progress'
  | 'refund_not_pending'
  | 'waiver_version_outdated'
  | 'waiver_signatures_complete'
  | 'plan_not_active'
  | 'membership_exists'
  | 'membership_not_active'
  | 'allowance_exhausted'
  | 'freeze_overlap'
  | 'freeze_not_cancellable'
  | 'change_pending'
  | 'change_not_allowed'
  | 'membership_not_transferable'
  | 'discount_not_applicable'
  | 'holder_photo_required'
  // 410
  | 'hold_expired'
  // 413, 415, 422, 429
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'idempotency_key_reused'
  | 'freeze_rules_violated'
  | 'rate_limited'
  // 5xx
  | 'internal_error'
  | 'service_unavailable'
  | 'payments_not_configured'
  | 'payment_provider_error';

/**
 * The one error type use-cases throw. It carries a machine code and an optional `detail` for
 * the caller; the HTTP layer maps the code to a status in one table.
 */
export class AppError extends Error {
  /**
   * `cause`: the failure behind a planned answer (Stripe unreachable behind a 503), logged with
   * it (see the error handler) and never sent to the client.
   */
  constructor(
    readonly code: ErrorCode,
    readonly detail?: unknown,
    options?: { cause: unknown },
  ) {
    super(code, options);
    this.name = 'AppError';
  }
}

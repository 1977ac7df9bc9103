import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * What a token is for. The purpose is part of the signed text, so a token made for one purpose
 * (say a check-in QR) is never accepted for another (say paying a booking).
 */
export type TokenPurpose = 'booking' | 'check_in' | 'waiver' | 'manage' | 'order' | 'member' | 'membership_manage';

export type TokenFailure = 'invalid' | 'expired';

export class TokenError extends Error {
  constructor(readonly reason: TokenFailure) {
    super(`token ${reason}`);
    this.name = 'TokenError';
  }
}

interface Claims {
  /** Subject: what the token is about, in its purpose's form (see SUBJECT_FORMS). */
  sub: string;
  /** Tenant the subject belongs to. */
  ten: string;
  /** Expiry, seconds since epoch. */
  exp: number;
}

const VERSION = 't1';

// The canonical uuid text, as @booking/domain's UUID_PATTERN (this package depends on no other).
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const SINGLE_UUID = new RegExp(`^${UUID}$`, 'i');

/**
 * The subject each purpose is issued for: a booking id, an order id (`order`: the buyer's view of
 * an online order), or for manage and waiver links `<bookingId>:<customerId>` (waiver links
 * issued before they named the customer are a booking id alone); a member token (`member`,
 * the card or QR a member shows) is `<membershipId>:<tokenVersion>`, so a holder change, which
 * bumps the version, retires the previous holder's token; a member's self-service link
 * (`membership_manage`) has the same form, so a holder change retires it too.
 * Checked on every verification, so callers can hand the subject straight to queries on uuid
 * columns: a genuinely signed token whose subject has another shape (say one signed by hand with
 * a leaked or test secret) is invalid rather than a database error.
 */
const SUBJECT_FORMS: Record<TokenPurpose, RegExp> = {
  booking: SINGLE_UUID,
  check_in: SINGLE_UUID,
  waiver: new RegExp(`^${UUID}(:${UUID})?$`, 'i'),
  manage: new RegExp(`^${UUID}:${UUID}$`, 'i'),
  order: SINGLE_UUID,
  member: new RegExp(`^${UUID}:[1-9][0-9]{0,8}$`, 'i'),
  membership_manage: new RegExp(`^${UUID}:[1-9][0-9]{0,8}$`, 'i'),
};

function mac(secret: string, purpose: TokenPurpose, payload: string): Buffer {
  return createHmac('sha256', secret).update(`${VERSION}.${purpose}.${payload}`).digest();
}

/**
 * A compact HMAC-SHA256 token: `t1.<base64url claims>.<base64url mac>`. Not a JWT on purpose:
 * there is no algorithm header to negotiate, so none can be downgraded.
 */
export function signToken(
  secret: string,
  purpose: TokenPurpose,
  claims: { subject: string; tenantId: string; ttlSeconds: number; now?: Date },
): string {
  const nowSeconds = Math.floor((claims.now ?? new Date()).getTime() / 1000);
  const body: Claims = { sub: claims.subject, ten: claims.tenantId, exp: nowSeconds + claims.ttlSeconds };
  const payload = Buffer.from(JSON.stringify(body)).toString('base64url');
  return `${VERSION}.${payload}.${mac(secret, purpose, payload).toString('base64url')}`;
}

/**
 * Checks signature, expiry and the claims' forms; throws TokenError('invalid' | 'expired').
 *
 * The signature must be the canonical base64url text of the MAC, compared as text: decoding
 * first would accept other spellings of the same bytes (the last character carries two unused
 * bits, and the decoder skips characters outside the alphabet), so one token would have several
 * valid forms.
 */
export function verifyToken(
  secret: string,
  purpose: TokenPurpose,
  token: string,
  now: Date = new Date(),
): { subject: string; tenantId: string; expiresAt: Date } {
  const parts = token.split('.');
  if (parts.length !== 3 || parts[0] !== VERSION) throw new TokenError('invalid');
  const [, payload, signature] = parts as [string, string, string];
  const expected = Buffer.from(mac(secret, purpose, payload).toString('base64url'));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new TokenError('invalid');
  }
  let claims: Claims;
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Claims;
  } catch {
    throw new TokenError('invalid');
  }
  if (
    typeof claims !== 'object' ||
    claims === null ||
    typeof claims.sub !== 'string' ||
    typeof claims.ten !== 'string' ||
    typeof claims.exp !== 'number'
  ) {
    throw new TokenError('invalid');
  }
  if (claims.exp * 1000 <= now.getTime()) throw new TokenError('expired');
  // After expiry: a genuine token whose time is over is reported expired, whatever it names.
  if (!SUBJECT_FORMS[purpose].test(claims.sub) || !SINGLE_UUID.test(claims.ten)) throw new TokenError('invalid');
  return { subject: claims.sub, tenantId: claims.ten, expiresAt: new Date(claims.exp * 1000) };
}

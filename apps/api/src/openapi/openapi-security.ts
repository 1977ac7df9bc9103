import type { ErrorCode } from '@booking/domain';
import type { Role } from '../operators/api-key-auth';

/** Error codes an operation can answer, each with when. */
export type Codes = Partial<Record<ErrorCode, string>>;

/** Who may call an operation: its security requirements and the errors they answer. */
export interface Access {
  security: Record<string, string[]>[];
  errors: Codes;
}

/**
 * The credentials of the API. The waiver token is not among them: it travels in the path of the
 * waiver link, where OpenAPI has no security scheme, so it is described as that path parameter.
 */
export const SECURITY_SCHEMES = {
  apiKey: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'svc_<prefix>.<secret>',
    description:
      "A tenant API key, `Authorization: Bearer svc_<prefix>.<secret>`, issued with `pnpm keys`. Its role (staff < manager < admin) must be at least the operation's; webhook changes also need the webhooks:write scope.",
  },
  bookingToken: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Booking-Token',
    description:
      'The booking_token of POST /api/bookings: pays that booking only, for BOOKING_TOKEN_TTL_SECONDS (1 hour).',
  },
  orderToken: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Order-Token',
    description:
      'The order_token of POST /api/orders/wallet-topups: reads that order only, for BOOKING_TOKEN_TTL_SECONDS (1 hour).',
  },
  membershipToken: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Membership-Token',
    description:
      "The manage_token of a membership purchase (or of POST /api/v1/memberships/{id}/tokens): the member's self-service for that membership (freeze, plan change, cancel), for MEMBER_TOKEN_TTL_DAYS. Used only when no Authorization header is sent.",
  },
  manageToken: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Manage-Token',
    description:
      'The manage_token of POST /api/bookings: customer self-service for that booking while its customer holds it, until its slot starts. Used only when no Authorization header is sent.',
  },
};

/** No credentials: the widget's flow, the guest's waiver, Stripe's notifications, health checks. */
export const anonymous: Access = { security: [], errors: {} };

/** A tenant API key of at least `role` (and with `scope`, when given). */
export function apiKeyOf(role: Role, scope?: string): Access {
  const below = role === 'staff' && !scope ? undefined : `the key's role is below ${role}`;
  return {
    security: [{ apiKey: [] }],
    errors: {
      unauthorized: 'no API key, or a malformed, unknown or revoked one',
      ...(below && { forbidden: scope ? `${below}, or it lacks the ${scope} scope` : below }),
    },
  };
}

export const bookingToken: Access = {
  security: [{ bookingToken: [] }],
  errors: {
    invalid_token: 'X-Booking-Token is missing, not genuine, or for another booking',
    token_expired: 'X-Booking-Token has expired',
  },
};

export const orderToken: Access = {
  security: [{ orderToken: [] }],
  errors: {
    invalid_token: 'X-Order-Token is missing, not genuine, or for another order',
    token_expired: 'X-Order-Token has expired',
  },
};

/** A manager's API key, or the customer's manage token for the booking in the path. */
export const managerKeyOrManageToken: Access = {
  security: [{ apiKey: [] }, { manageToken: [] }],
  errors: {
    ...apiKeyOf('manager').errors,
    invalid_token: 'X-Manage-Token is not genuine, is for another booking, or its booking now has another customer',
    token_expired: 'X-Manage-Token has expired: the slot has started',
  },
};

/** A tenant API key of at least `role`, or the member's self-service token for the membership in the path. */
export function keyOrMembershipToken(role: Role): Access {
  return {
    security: [{ apiKey: [] }, { membershipToken: [] }],
    errors: {
      ...apiKeyOf(role).errors,
      invalid_token:
        'X-Membership-Token is not genuine, is for another membership, or was handed out before the membership changed holder',
      token_expired: 'X-Membership-Token has expired',
    },
  };
}

import type { Config } from '@booking/config';
import { AppError } from '@booking/domain';
import { signToken, TokenError, verifyToken } from '@booking/signing';

/**
 * The member token: what a member shows (card, QR, or pasted into the booking widget) to use
 * their membership. It names the membership and its token version, so a holder change (which
 * bumps the version) retires the previous holder's token without a revocation list.
 */
export function issueMemberToken(
  config: Config,
  membership: { id: string; tenantId: string; tokenVersion: number },
): string {
  return signToken(config.tokenSigningSecret, 'member', {
    subject: `${membership.id}:${membership.tokenVersion}`,
    tenantId: membership.tenantId,
    ttlSeconds: config.memberships.memberTokenTtlDays * 86_400,
  });
}

/**
 * Reads a member token presented for `tenantId`; 400 member_token_invalid when it is forged,
 * expired or of another tenant. The caller checks the version against the locked membership.
 */
export function readMemberToken(
  config: Config,
  tenantId: string,
  token: string,
): { membershipId: string; tokenVersion: number } {
  try {
    const { subject, tenantId: tokenTenant } = verifyToken(config.tokenSigningSecret, 'member', token);
    if (tokenTenant !== tenantId) throw new AppError('member_token_invalid');
    const [membershipId, version] = subject.split(':');
    return { membershipId: membershipId!, tokenVersion: Number(version) };
  } catch (error) {
    if (error instanceof TokenError) throw new AppError('member_token_invalid', `the member token is ${error.reason}`);
    throw error;
  }
}

/**
 * The self-service link's token: the member manages their own membership with it. Like the
 * member token it names the token version, so a holder change retires links handed out before
 * (staff hand out new ones with POST /api/v1/memberships/{id}/tokens).
 */
export function issueManageToken(
  config: Config,
  membership: { id: string; tenantId: string; tokenVersion: number },
): string {
  return signToken(config.tokenSigningSecret, 'membership_manage', {
    subject: `${membership.id}:${membership.tokenVersion}`,
    tenantId: membership.tenantId,
    ttlSeconds: config.memberships.memberTokenTtlDays * 86_400,
  });
}

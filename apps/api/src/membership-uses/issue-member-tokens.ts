import type { Config } from '@booking/config';
import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import { verifyToken } from '@booking/signing';
import { issueManageToken, issueMemberToken } from '../memberships/member-token';
import type { Operator } from '../operators/api-key-auth';
import type { MemberTokens } from './membership-use-schemas';

/**
 * Staff hand a member their tokens: the member token (shown at the desk or typed into the
 * booking widget) and the self-service link's token. Both are HMAC-signed, so nothing is
 * written: they are in this answer only (a retry with the same Idempotency-Key gets the sealed
 * stored answer), never logged, never in an event. A holder change bumps the membership's token
 * version, which retires every member token issued before it.
 */
export async function issueMemberTokens(
  deps: { db: Db; config: Config },
  operator: Operator,
  membershipId: string,
): Promise<MemberTokens> {
  const membership = await deps.db.membership.findFirst({
    where: { id: membershipId, tenantId: operator.tenantId },
    select: { id: true, tenantId: true, tokenVersion: true },
  });
  if (!membership) throw new AppError('membership_not_found');
  const memberToken = issueMemberToken(deps.config, membership);
  const manageToken = issueManageToken(deps.config, membership);
  // Both were signed with the same lifetime just now; the expiry is the one written in the token.
  const { expiresAt } = verifyToken(deps.config.tokenSigningSecret, 'member', memberToken);
  return {
    membership_id: membership.id,
    member_token: memberToken,
    manage_token: manageToken,
    expires_at: expiresAt.toISOString(),
  };
}

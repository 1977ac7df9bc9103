import type { Db, MembershipPhoto } from '@booking/db';
import { AppError } from '@booking/domain';

/** The membership's current holder photo; 404 membership_not_found or photo_not_found. */
export async function loadHolderPhoto(db: Db, tenantId: string, membershipId: string): Promise<MembershipPhoto> {
  const membership = await db.membership.findFirst({ where: { id: membershipId, tenantId } });
  if (!membership) throw new AppError('membership_not_found');
  if (!membership.holderPhotoId) throw new AppError('photo_not_found');
  // Gone since the membership was read: erased with its customer (anonymise-customer.ts).
  const photo = await db.membershipPhoto.findUnique({ where: { id: membership.holderPhotoId } });
  if (!photo) throw new AppError('photo_not_found');
  return photo;
}

/** 404 membership_not_found unless the membership is the tenant's. */
export async function assertTenantMembership(db: Db, tenantId: string, membershipId: string): Promise<void> {
  const found = await db.membership.findFirst({ where: { id: membershipId, tenantId }, select: { id: true } });
  if (!found) throw new AppError('membership_not_found');
}

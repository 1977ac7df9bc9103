import { createHash, randomUUID } from 'node:crypto';
import type { Db } from '@booking/db';
import { AppError, isTerminalMembership } from '@booking/domain';
import { recordEvent } from '@booking/events';
import { lockMembership } from '../locks';
import { membershipRef } from '../memberships/membership-ref';
import type { Operator } from '../operators/api-key-auth';
import type { HolderPhotoView } from './holder-schemas';
import type { PhotoType } from './image-type';
import { photoView } from './photo-view';

/**
 * Staff capture the holder's photo (at the desk): stored with its SHA-256, made the membership's
 * current photo, and membership.holder_photo_captured recorded, naming the photo only (never the
 * image, never a link to it). Sending the current photo again changes nothing, so a retried
 * upload is one capture. Earlier photos are kept, no longer current.
 */
export async function captureHolderPhoto(
  db: Db,
  operator: Operator,
  membershipId: string,
  photo: { contentType: PhotoType; image: Buffer },
): Promise<HolderPhotoView> {
  const sha256 = createHash('sha256').update(photo.image).digest('hex');
  return db.$transaction(async (tx) => {
    const membership = await lockMembership(tx, { tenantId: operator.tenantId }, membershipId);
    if (!membership) throw new AppError('membership_not_found');
    if (isTerminalMembership(membership.status))
      throw new AppError('membership_not_active', { status: membership.status });
    if (membership.holderPhotoId) {
      const current = await tx.membershipPhoto.findUniqueOrThrow({ where: { id: membership.holderPhotoId } });
      if (current.sha256 === sha256 && current.holderCustomerId === membership.holderCustomerId) {
        return photoView(current);
      }
    }
    const stored = await tx.membershipPhoto.create({
      data: {
        id: randomUUID(),
        membershipId,
        holderCustomerId: membership.holderCustomerId,
        contentType: photo.contentType,
        image: new Uint8Array(photo.image),
        sha256,
        actorKeyId: operator.keyId,
      },
    });
    await tx.membership.update({ where: { id: membershipId }, data: { holderPhotoId: stored.id } });
    await recordEvent(tx, {
      tenantId: membership.tenantId,
      name: 'membership.holder_photo_captured',
      entityType: 'membership',
      entityId: membershipId,
      fields: {
        ...membershipRef(membership),
        photo_id: stored.id,
        captured_at: stored.capturedAt.toISOString(),
        actor_user_id: operator.keyId,
      },
    });
    return photoView(stored);
  });
}

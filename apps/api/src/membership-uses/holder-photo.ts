import { AppError } from '@booking/domain';
import type { LockedMembership } from '../locks';

/**
 * A plan that requires a photo (requires_photo) is not used until the holder's photo is captured:
 * 409 holder_photo_required. A holder change clears the photo, so the new holder has to be
 * photographed before the membership is used again. Checked under the membership's lock.
 */
export function assertHolderPhotoCaptured(membership: Pick<LockedMembership, 'id' | 'holderPhotoId' | 'plan'>): void {
  if (membership.plan.requiresPhoto && !membership.holderPhotoId) {
    throw new AppError('holder_photo_required', { membership_id: membership.id });
  }
}

import type { MembershipPhoto } from '@booking/db';
import type { HolderPhotoView } from './holder-schemas';
import type { PhotoType } from './image-type';

/** A stored holder photo as the API describes it (never its bytes). */
export function photoView(photo: MembershipPhoto): HolderPhotoView {
  return {
    photo_id: photo.id,
    membership_id: photo.membershipId,
    holder_customer_id: photo.holderCustomerId,
    content_type: photo.contentType as PhotoType,
    size_bytes: photo.image.length,
    sha256: photo.sha256,
    captured_at: photo.capturedAt.toISOString(),
  };
}

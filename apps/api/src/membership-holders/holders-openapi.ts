import { MembershipSummary } from '../memberships/membership-schemas';
import { ok, uuidPathParam } from '../openapi/openapi-helpers';
import type { OpenApiFeature } from '../openapi/openapi-operation';
import { apiKeyOf } from '../openapi/openapi-security';
import { ChangeHolderRequest, HolderPhotoView } from './holder-schemas';
import { PHOTO_TYPES } from './image-type';

const membershipId = uuidPathParam('the membership id');
const membershipNotFound = 'no such membership in this tenant (also for an id that is not a uuid)';
const imageContent = Object.fromEntries(
  PHOTO_TYPES.map((type) => [type, { schema: { type: 'string', contentMediaType: type } }]),
);

export const holdersOpenApi: OpenApiFeature = {
  tag: {
    name: 'Membership holders',
    description:
      'The person who uses a membership (the holder; the owner pays): handed to someone else when the plan allows it, and their photo, kept by the service and shown to staff only.',
  },
  operations: [
    {
      method: 'post',
      path: '/api/v1/memberships/{id}/holder',
      operationId: 'changeMembershipHolder',
      summary: 'Give a transferable membership to another holder (manager+)',
      description:
        "The new holder is one of the tenant's customers (customer_id) or the customer with the contact's email (made if new). The previous holder's member token stops working (its version is retired) and the holder photo is cleared. Records membership.holder_changed; naming the current holder again changes nothing.",
      access: apiKeyOf('manager'),
      parameters: [membershipId],
      idempotency: 'Scoped to the route and the API key',
      requestBody: {
        schema: ChangeHolderRequest,
        example: {
          customer: { email: 'sam@example.com', first_name: 'Sam', last_name: 'Reyes' },
          reason: 'gift to a family member',
        },
      },
      responses: { 200: ok('The membership with its new holder', MembershipSummary) },
      errors: {
        invalid_body: 'neither or both of customer and customer_id, a malformed email, or another field',
        membership_not_found: membershipNotFound,
        customer_not_found: 'customer_id names no customer of this tenant',
        customer_anonymised: 'customer_id names a customer whose data was erased',
        membership_not_transferable: "the membership's plan is not transferable",
        membership_not_active: 'the membership has ended, expired, was cancelled or is not paid yet (detail.status)',
      },
    },
    {
      method: 'put',
      path: '/api/v1/memberships/{id}/holder-photo',
      operationId: 'captureMembershipHolderPhoto',
      summary: "Store the holder's photo (staff+)",
      description:
        "The body is the image itself, not JSON. It becomes the membership's current photo; earlier ones are kept but no longer shown. Records membership.holder_photo_captured, which names the photo and never carries the image or a link to it. Sending the current photo again changes nothing.",
      access: apiKeyOf('staff'),
      parameters: [membershipId],
      rawBody: {
        mediaTypes: [...PHOTO_TYPES],
        description: 'A JPEG, PNG or WebP image of at most 2 MB, its Content-Type saying which.',
      },
      responses: { 200: ok('The stored photo (without its bytes)', HolderPhotoView) },
      errors: {
        invalid_body: 'the body is empty, or its bytes are not an image of its Content-Type',
        unsupported_media_type:
          "Content-Type is not image/jpeg, image/png or image/webp, or the body's Content-Encoding is not supported",
        payload_too_large: 'the image is larger than 2 MB',
        membership_not_found: membershipNotFound,
        membership_not_active: 'the membership has ended, expired or was cancelled (detail.status)',
      },
    },
    {
      method: 'get',
      path: '/api/v1/memberships/{id}/holder-photo',
      operationId: 'getMembershipHolderPhoto',
      summary: "The holder's current photo, as the image itself (staff+)",
      access: apiKeyOf('staff'),
      parameters: [membershipId],
      responses: {
        200: { description: 'The image, in the type it was stored with; not cached', content: imageContent },
      },
      errors: {
        membership_not_found: membershipNotFound,
        photo_not_found: 'the membership has no current holder photo',
      },
    },
  ],
  schemas: [ChangeHolderRequest, HolderPhotoView, MembershipSummary],
};

import { Type, type Static } from '@sinclair/typebox';

const Uuid = Type.String({ format: 'uuid' });

export const ChangeHolderRequest = Type.Object(
  {
    customer: Type.Optional(
      Type.Object(
        {
          email: Type.String({ format: 'email', maxLength: 254 }),
          first_name: Type.String({ minLength: 1, maxLength: 100 }),
          last_name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
          phone: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
        },
        {
          additionalProperties: false,
          description: "the new holder by contact: the tenant's customer with this email, made if new",
        },
      ),
    ),
    customer_id: Type.Optional(
      Type.String({ format: 'uuid', description: "the new holder: one of the tenant's customers" }),
    ),
    reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'why, in a few words' })),
  },
  {
    additionalProperties: false,
    description: 'Exactly one of customer and customer_id.',
    $id: 'ChangeHolderRequest',
  },
);
export type ChangeHolderRequest = Static<typeof ChangeHolderRequest>;

export const HolderPhotoView = Type.Object(
  {
    photo_id: Uuid,
    membership_id: Uuid,
    holder_customer_id: Type.String({ format: 'uuid', description: 'the holder the photo shows' }),
    content_type: Type.Union([Type.Literal('image/jpeg'), Type.Literal('image/png'), Type.Literal('image/webp')]),
    size_bytes: Type.Integer({ minimum: 1 }),
    sha256: Type.String({ pattern: '^[0-9a-f]{64}$', description: "the image's SHA-256, hex" }),
    captured_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'HolderPhoto' },
);
export type HolderPhotoView = Static<typeof HolderPhotoView>;

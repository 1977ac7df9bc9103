import { Type, type Static } from '@sinclair/typebox';

/** A name a person typed: surrounding spaces are dropped, something must remain. */
const PersonName = (description: string) => Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description });

export const SignWaiverRequest = Type.Object(
  {
    signer_name: PersonName('who signs (a parent may sign for a child)'),
    participant_name: PersonName(
      'who takes part; may equal signer_name. One signature per participant (case and surrounding spaces ignored)',
    ),
    consent: Type.Literal(true, { description: 'must be true: the signer agrees to the waiver text' }),
    waiver_version: Type.String({
      minLength: 1,
      maxLength: 20,
      description: 'the waiver.version the signer was shown; must be the current one',
    }),
  },
  { additionalProperties: false, $id: 'SignWaiverRequest' },
);
export type SignWaiverRequest = Static<typeof SignWaiverRequest>;

export const WaiverView = Type.Object(
  {
    booking_id: Type.String({ format: 'uuid' }),
    experience: Type.Object({ name: Type.String() }),
    slot: Type.Object({ starts_at: Type.String({ format: 'date-time' }) }),
    guest_count: Type.Integer({ minimum: 1, description: 'at most this many participants can sign' }),
    waiver: Type.Object({
      version: Type.String({ description: 'send back as waiver_version when signing' }),
      text: Type.String(),
    }),
    signatures: Type.Array(
      Type.Object({ participant_name: Type.String(), signed_at: Type.String({ format: 'date-time' }) }),
      { description: "the current party's; those of a party the booking was transferred from are not shown" },
    ),
  },
  { $id: 'WaiverView' },
);
export type WaiverView = Static<typeof WaiverView>;

export const WaiverSignatureResponse = Type.Object(
  {
    waiver_id: Type.String({ format: 'uuid', description: 'the signature (evidence) id, as in waiver.signed' }),
    booking_id: Type.String({ format: 'uuid' }),
    participant_name: Type.String(),
    waiver_version: Type.String(),
    signed_at: Type.String({ format: 'date-time' }),
    evidence_hash: Type.String({
      description: 'SHA-256 (hex) of the waiver text, version, booking, participant, signer and signing time',
    }),
    already_signed: Type.Boolean({ description: 'true when this participant had signed before (200, nothing new)' }),
  },
  { $id: 'WaiverSignatureResponse' },
);
export type WaiverSignatureResponse = Static<typeof WaiverSignatureResponse>;

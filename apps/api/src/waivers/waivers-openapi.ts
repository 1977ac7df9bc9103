import { ok } from '../openapi/openapi-helpers';
import type { OpenApiFeature } from '../openapi/openapi-operation';
import { anonymous } from '../openapi/openapi-security';
import { WAIVER_SIGNS_PER_MINUTE } from './waiver-routes';
import { SignWaiverRequest, WaiverSignatureResponse, WaiverView } from './waiver-schemas';

// The token is the guest's credential, but it travels in the path of the waiver link, where
// OpenAPI has no security scheme: the operations are anonymous and the parameter says so.
const token = {
  name: 'token',
  in: 'path',
  required: true,
  schema: { type: 'string', maxLength: 2048 },
  description:
    "the signed waiver token from the booking's waiver_url; the guest's only credential (request logs show [token])",
};
const tokenErrors = {
  invalid_token: 'the token is not genuine, not a waiver token, or longer than 2048 characters',
  token_expired: 'the token has expired (a day after the visit)',
  waiver_not_found: "no such booking in the token's tenant",
  waiver_not_required: 'the experience needs no waiver',
  booking_not_amendable: 'the booking is cancelled or refunded',
};

export const waiversOpenApi: OpenApiFeature = {
  tag: {
    name: 'Waivers',
    description: "The guest's waiver behind a booking's waiver_url; the link is the credential.",
  },
  operations: [
    {
      method: 'get',
      path: '/api/waivers/{token}',
      operationId: 'getWaiver',
      summary: 'The waiver behind a booking’s waiver_url: visit, current text and version, who has signed',
      access: anonymous,
      parameters: [token],
      responses: {
        200: ok(
          "The waiver to sign and the current party's signatures so far (participant and time only); a transfer supersedes the previous party's",
          WaiverView,
        ),
      },
      errors: tokenErrors,
    },
    {
      method: 'post',
      path: '/api/waivers/{token}/sign',
      operationId: 'signWaiver',
      summary: 'Sign the waiver for one participant',
      description:
        'At most guest_count participants of the party that holds the booking, one signature each (names compared trimmed and case-insensitively); signatures a transfer superseded count for neither. The evidence stored: a SHA-256 of the waiver text, version, booking, participant, signer and signing time, with the IP address and user agent. Signing again for a participant who has signed is 200 with the stored signature and records nothing. New evidence emits waiver.signed (schema_version 2) carrying only waiver_id and booking_id.',
      access: anonymous,
      parameters: [token],
      requestBody: {
        schema: SignWaiverRequest,
        example: { signer_name: 'Ada Lovelace', participant_name: 'Ada Lovelace', consent: true, waiver_version: 'v1' },
      },
      responses: {
        201: ok('Signed; waiver.signed recorded', WaiverSignatureResponse),
        200: ok('This participant had signed already; nothing new', WaiverSignatureResponse),
      },
      errors: {
        invalid_body:
          'the body does not match its schema: names empty or over 200 characters, consent not true, unknown fields',
        ...tokenErrors,
        waiver_version_outdated:
          'waiver_version is not the current one (detail.current_version): fetch the waiver again',
        waiver_signatures_complete: 'every guest has signed (detail.guest_count)',
      },
      rateLimitPerMinute: () => WAIVER_SIGNS_PER_MINUTE,
    },
  ],
  schemas: [SignWaiverRequest, WaiverView, WaiverSignatureResponse],
};

import { SignWaiverRequest, WaiverSignatureResponse, WaiverView } from './waiver-schemas';
import { error, json } from '../openapi/openapi-helpers';

const token = {
  name: 'token',
  in: 'path',
  required: true,
  schema: { type: 'string', maxLength: 2048 },
  description:
    "the signed waiver token from the booking's waiver_url; the guest's only credential (request logs show [token])",
};
const tokenErrors = {
  401: error('invalid_token (bad signature or not a waiver token), token_expired (a day after the visit)'),
  404: error("waiver_not_found: no such booking in the token's tenant"),
};

export const waiversOpenApi = {
  paths: {
    '/api/waivers/{token}': {
      get: {
        summary: 'The waiver behind a booking’s waiver_url: visit, current text and version, who has signed',
        parameters: [token],
        responses: {
          200: {
            description: 'The waiver to sign and the signatures so far (participant and time only)',
            ...json(WaiverView),
          },
          ...tokenErrors,
          409: error(
            'waiver_not_required (the experience needs none), booking_not_amendable (the booking is cancelled or refunded)',
          ),
        },
      },
    },
    '/api/waivers/{token}/sign': {
      post: {
        summary: 'Sign the waiver for one participant',
        description:
          'At most guest_count participants, one signature each (names compared trimmed and case-insensitively). The evidence stored: a SHA-256 of the waiver text, version, booking, participant, signer and signing time, with the IP address and user agent. Signing again for a participant who has signed is 200 with the stored signature and records nothing. New evidence emits waiver.signed (schema_version 2) carrying only waiver_id and booking_id.',
        parameters: [token],
        requestBody: { required: true, ...json(SignWaiverRequest) },
        responses: {
          201: { description: 'Signed; waiver.signed recorded', ...json(WaiverSignatureResponse) },
          200: { description: 'This participant had signed already; nothing new', ...json(WaiverSignatureResponse) },
          400: error('invalid_body: names empty or over 200 characters, consent not true, unknown fields'),
          ...tokenErrors,
          409: error(
            'waiver_not_required, booking_not_amendable (cancelled or refunded), waiver_version_outdated (detail.current_version: fetch the waiver again), waiver_signatures_complete (every guest has signed)',
          ),
          429: error('Rate limited (30 per minute per IP); see the RateLimit and RateLimit-Policy headers'),
        },
      },
    },
  },
  schemas: [SignWaiverRequest, WaiverView, WaiverSignatureResponse],
};

import { ok } from '../openapi/openapi-helpers';
import type { OpenApiFeature } from '../openapi/openapi-operation';
import { anonymous } from '../openapi/openapi-security';
import { HoldRequest, HoldResponse } from './hold-schemas';

export const holdsOpenApi: OpenApiFeature = {
  tag: { name: 'Holds', description: 'Seats kept for a guest while they fill in the booking form.' },
  operations: [
    {
      method: 'post',
      path: '/api/bookings/hold',
      operationId: 'placeHold',
      summary: 'Hold seats in a slot for 10 minutes',
      description:
        'The seats count against the slot until the hold is booked or expires (HOLD_TTL_SECONDS). A retry with the same Idempotency-Key and body gets the same hold, never a second one, even while the first request still runs (not 409 idempotency_request_in_progress); only 4xx answers are stored.',
      access: anonymous,
      requestBody: {
        schema: HoldRequest,
        example: {
          slot_id: '2346bae7-86b9-44c7-8270-9f8a857f2cf4',
          experience_id: 'b908febc-c846-4446-8ac4-9687a7ee3f08',
          seats: 2,
        },
      },
      responses: { 200: ok('Seats held', HoldResponse) },
      errors: {
        invalid_guest_count: "seats is outside the experience's party size (detail: min_party_size, max_party_size)",
        experience_slot_mismatch: 'slot_id is not a slot of experience_id',
        slot_not_found: 'no such slot, or its experience or tenant is unpublished',
        insufficient_capacity: 'the slot cannot supply that many seats',
        slot_unavailable: 'the slot has already started',
      },
      idempotency: 'Scoped to the route and the client address',
      rebuildsAnswers: true,
      rateLimitPerMinute: (config) => config.rateLimits.holdsPerMinute,
    },
  ],
  schemas: [HoldRequest, HoldResponse],
};

import { ok } from '../openapi/openapi-helpers';
import type { OpenApiFeature } from '../openapi/openapi-operation';
import { anonymous } from '../openapi/openapi-security';
import { Experience, Slot, WidgetExperienceResponse } from './widget-schemas';

const slug = (name: string, description: string) => ({
  name,
  in: 'query',
  required: true,
  schema: { type: 'string', minLength: 1, maxLength: 100 },
  description,
});

/** The anonymous booking widget's read. */
export const widgetOpenApi: OpenApiFeature = {
  tag: { name: 'Widget', description: 'What the anonymous booking widget shows: an experience and its slots.' },
  operations: [
    {
      method: 'get',
      path: '/api/widget/experience',
      operationId: 'getWidgetExperience',
      summary: 'An experience and its bookable slots for the next 14 days',
      description: 'Other query parameters are ignored (the widget may add its own).',
      access: anonymous,
      parameters: [slug('tenant', 'tenant slug'), slug('experience', 'experience slug')],
      responses: {
        200: ok('The experience and its slots with seats_remaining >= min_party_size', WidgetExperienceResponse),
      },
      errors: {
        invalid_query: 'tenant or experience is missing, empty or longer than 100 characters',
        experience_not_found: 'the tenant or the experience is unknown or unpublished',
      },
    },
  ],
  schemas: [Experience, Slot, WidgetExperienceResponse],
};

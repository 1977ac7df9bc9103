import { ok } from '../openapi/openapi-helpers';
import type { OpenApiFeature } from '../openapi/openapi-operation';
import { anonymous } from '../openapi/openapi-security';
import { Liveness, Readiness } from './health-schemas';

/** For load balancers and orchestrators. */
export const healthOpenApi: OpenApiFeature = {
  tag: { name: 'Health', description: 'Liveness and readiness, for load balancers and orchestrators.' },
  operations: [
    {
      method: 'get',
      path: '/healthz',
      operationId: 'checkLiveness',
      summary: 'Liveness: the process answers',
      access: anonymous,
      responses: { 200: ok('The process is up', Liveness) },
      errors: {},
    },
    {
      method: 'get',
      path: '/readyz',
      operationId: 'checkReadiness',
      summary: 'Readiness: PostgreSQL and Redis are reachable and the process is not shutting down',
      access: anonymous,
      responses: { 200: ok('Ready', Readiness) },
      errors: {
        service_unavailable:
          'PostgreSQL or Redis did not answer within 2 s (detail: {postgres, redis}, each ok or down; why stays in the log), or the process is draining before it shuts down (detail: {draining: true})',
      },
    },
  ],
  schemas: [Liveness, Readiness],
};

import type { Prisma } from '@booking/db';

type EndpointRow = Prisma.WebhookEndpointGetPayload<object>;

/** An endpoint as operators see it: never its secrets. */
export function endpointView(endpoint: EndpointRow) {
  return {
    id: endpoint.id,
    url: endpoint.url,
    events: endpoint.events,
    status: endpoint.status,
    consecutive_failures: endpoint.consecutiveFailures,
    disabled_at: endpoint.disabledAt?.toISOString() ?? null,
    previous_secret_expires_at: endpoint.previousSecretExpiresAt?.toISOString() ?? null,
    created_at: endpoint.createdAt.toISOString(),
  };
}

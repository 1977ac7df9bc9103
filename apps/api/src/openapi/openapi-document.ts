import type { Config } from '@booking/config';
import { amendmentsOpenApi } from '../amendments/amendments-openapi';
import { bookingsOpenApi } from '../bookings/bookings-openapi';
import { customersOpenApi } from '../customers/customers-openapi';
import { giftCardsOpenApi } from '../gift-cards/gift-cards-openapi';
import { healthOpenApi } from '../health/health-openapi';
import { holdsOpenApi } from '../holds/holds-openapi';
import { paymentsOpenApi } from '../payments/payments-openapi';
import { onlineOrdersOpenApi } from '../online-orders/online-orders-openapi';
import { ordersOpenApi } from '../orders/orders-openapi';
import { posOrdersOpenApi } from '../pos-orders/pos-orders-openapi';
import { posOpenApi } from '../pos/pos-openapi';
import { refundsOpenApi } from '../refunds/refunds-openapi';
import { membershipsOpenApi } from '../memberships/memberships-openapi';
import { freezesOpenApi } from '../membership-freezes/freezes-openapi';
import { holdersOpenApi } from '../membership-holders/holders-openapi';
import { membershipUsesOpenApi } from '../membership-uses/membership-uses-openapi';
import { membershipChangesOpenApi } from '../membership-changes/membership-changes-openapi';
import { membershipBillingOpenApi } from '../membership-billing/membership-billing-openapi';
import { membershipPlansOpenApi } from '../membership-plans/membership-plans-openapi';
import { membershipSalesOpenApi } from '../membership-sales/membership-sales-openapi';
import { walletsOpenApi } from '../wallets/wallets-openapi';
import { waiversOpenApi } from '../waivers/waivers-openapi';
import { webhookEndpointsOpenApi } from '../webhooks/webhook-endpoints-openapi';
import { widgetOpenApi } from '../widget/widget-openapi';
import { componentSchemas, ErrorBody } from './openapi-components';
import { RESPONSE_HEADERS } from './openapi-headers';
import { describeOperation, type OpenApiFeature } from './openapi-operation';
import { SECURITY_SCHEMES } from './openapi-security';
import { WEBHOOK_EVENTS_TAG, webhookItems } from './webhook-events';
import { webhooksOpenApi } from './webhooks-openapi';

/** Every feature, in the order the document lists them. */
const FEATURES: OpenApiFeature[] = [
  widgetOpenApi,
  holdsOpenApi,
  bookingsOpenApi,
  paymentsOpenApi,
  amendmentsOpenApi,
  waiversOpenApi,
  customersOpenApi,
  giftCardsOpenApi,
  posOpenApi,
  posOrdersOpenApi,
  onlineOrdersOpenApi,
  ordersOpenApi,
  walletsOpenApi,
  membershipPlansOpenApi,
  membershipSalesOpenApi,
  membershipsOpenApi,
  freezesOpenApi,
  holdersOpenApi,
  membershipUsesOpenApi,
  membershipChangesOpenApi,
  membershipBillingOpenApi,
  refundsOpenApi,
  webhookEndpointsOpenApi,
  healthOpenApi,
];

const DESCRIPTION = `Booking API for attraction venues: discovery, holds, bookings, payments, operator actions and webhook subscriptions. The events sent to webhook endpoints are under \`webhooks\`.

Every error is \`{error, detail?}\` with a machine code; each operation lists the codes it can answer, by status. A request body is JSON; query and path parameters are checked as described, and an unknown route is 404 not_found.`;

/** The OpenAPI 3.1 description of the API, built from the same schemas that validate requests. */
export function buildOpenApiDocument(config: Config) {
  const paths: Record<string, Record<string, unknown>> = {};
  const errorSchemas: Record<string, unknown> = {};
  for (const feature of FEATURES) {
    for (const spec of feature.operations) {
      const { operation, errorSchema } = describeOperation(spec, feature.tag.name, config);
      paths[spec.path] = { ...paths[spec.path], [spec.method]: operation };
      errorSchemas[errorSchema.name] = errorSchema.schema;
    }
  }
  const schemas = componentSchemas([
    ErrorBody,
    ...FEATURES.flatMap((feature) => feature.schemas),
    ...webhooksOpenApi.schemas,
  ]);
  return {
    openapi: '3.1.0',
    info: { title: 'Booking Service', version: '1.0.0', description: DESCRIPTION },
    // Relative: the API answers where this document is served, whatever the host is called.
    servers: [{ url: '/', description: 'this deployment' }],
    tags: [...FEATURES.map((feature) => feature.tag), WEBHOOK_EVENTS_TAG],
    paths,
    webhooks: webhookItems(webhooksOpenApi.webhooks),
    components: {
      securitySchemes: SECURITY_SCHEMES,
      headers: RESPONSE_HEADERS,
      schemas: {
        ...schemas,
        ...errorSchemas,
      },
    },
  };
}

import type { IRouter, Request } from 'express';
import type { AppDeps } from '../app-deps';
import { idParam } from '../http/path-params';
import { createParser } from '../http/validation';
import { operatorOf, requireRole } from '../operators/api-key-auth';
import { createEndpoint } from './create-endpoint';
import { deleteEndpoint } from './delete-endpoint';
import { endpointView } from './endpoint-view';
import { findEndpoint } from './find-endpoint';
import { listDeliveries } from './list-deliveries';
import { listEndpoints } from './list-endpoints';
import { recoverDeliveries } from './recover-deliveries';
import { redeliver } from './redeliver';
import { resumeEndpoint } from './resume-endpoint';
import { rotateEndpointSecret } from './rotate-endpoint-secret';
import { sendTestDelivery } from './send-test-delivery';
import {
  CreateEndpointRequest,
  DeliveriesQuery,
  RecoverRequest,
  TestDeliveryRequest,
  type RecoverResponse,
  type RedeliverResponse,
  type ResumedWebhookEndpoint,
  type TestDeliveryResponse,
  type WebhookDeliveryList,
  type WebhookEndpoint,
  type WebhookEndpointList,
} from './webhook-schemas';

const parseCreate = createParser(CreateEndpointRequest);
const parseTest = createParser(TestDeliveryRequest);
const parseRecover = createParser(RecoverRequest);
const parseDeliveriesQuery = createParser(DeliveriesQuery, 'invalid_query');

/**
 * The webhook developer settings, per tenant: admin keys read them, and changing them needs the
 * `webhooks:write` scope as well.
 */
export function webhookRoutes(router: IRouter, deps: AppDeps): void {
  const read = requireRole(deps.db, 'admin');
  const write = requireRole(deps.db, 'admin', { scope: 'webhooks:write' });
  const tenant = (req: Request) => operatorOf(req).tenantId;
  const endpointId = (req: Request) => idParam(req, 'webhook_endpoint_not_found');

  router.post('/api/webhooks/endpoints', write, async (req, res) => {
    res.status(201).json((await createEndpoint(deps, tenant(req), parseCreate(req.body))) satisfies WebhookEndpoint);
  });
  router.get('/api/webhooks/endpoints', read, async (req, res) => {
    res.json((await listEndpoints(deps.db, tenant(req))) satisfies WebhookEndpointList);
  });
  router.get('/api/webhooks/endpoints/:id', read, async (req, res) => {
    res.json(endpointView(await findEndpoint(deps.db, tenant(req), endpointId(req))) satisfies WebhookEndpoint);
  });
  router.delete('/api/webhooks/endpoints/:id', write, async (req, res) => {
    await deleteEndpoint(deps.db, tenant(req), endpointId(req));
    res.status(204).end();
  });
  router.post('/api/webhooks/endpoints/:id/rotate-secret', write, async (req, res) => {
    res.json((await rotateEndpointSecret(deps, tenant(req), endpointId(req))) satisfies WebhookEndpoint);
  });
  router.post('/api/webhooks/endpoints/:id/resume', write, async (req, res) => {
    res.json((await resumeEndpoint(deps, tenant(req), endpointId(req))) satisfies ResumedWebhookEndpoint);
  });
  router.post('/api/webhooks/endpoints/:id/test', write, async (req, res) => {
    const delivery = await sendTestDelivery(deps, tenant(req), endpointId(req), parseTest(req.body ?? {}).event);
    res.status(202).json(delivery satisfies TestDeliveryResponse);
  });
  router.post('/api/webhooks/endpoints/:id/recover', write, async (req, res) => {
    const recovered = await recoverDeliveries(deps, tenant(req), endpointId(req), parseRecover(req.body).since);
    res.status(202).json(recovered satisfies RecoverResponse);
  });
  router.get('/api/webhooks/endpoints/:id/deliveries', read, async (req, res) => {
    const query = parseDeliveriesQuery(req.query);
    const page = await listDeliveries(deps.db, tenant(req), endpointId(req), {
      limit: Number(query.limit ?? 20),
      startingAfter: query.starting_after,
    });
    res.json(page satisfies WebhookDeliveryList);
  });
  router.post('/api/webhooks/deliveries/:id/redeliver', write, async (req, res) => {
    res
      .status(202)
      .json(
        (await redeliver(deps, tenant(req), idParam(req, 'webhook_delivery_not_found'))) satisfies RedeliverResponse,
      );
  });
}

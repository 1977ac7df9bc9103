import type { Config } from '@booking/config';
import type { Db } from '@booking/db';
import { inSpan, tracingActive, type SpanHandle } from '@booking/tracing';
import type { DeliveryJobData } from '@booking/webhook-queue';
import { DelayedError, type Job } from 'bullmq';
import type { Logger } from 'pino';
import { postWebhook } from '../delivery/post-webhook';
import type { EndpointPlaces, Place, StepAside } from '../delivery/endpoint-places';
import type { ReceiverAgents } from '../delivery/receiver-agents';
import type { DispatcherMetrics } from '../metrics';
import type { AttemptRecorder } from './attempt-recorder';
import { buildEnvelope, withSecretFields } from './build-envelope';
import type { EndpointSecrets } from './endpoint-secrets';
import type { PutOffWriter } from './put-off';
import type { DeliveryReader, DeliveryToSend } from './read-delivery';
import { signedHeaders } from './signed-headers';

export interface DeliverDeps {
  db: Db;
  reader: DeliveryReader;
  recorder: AttemptRecorder;
  putOff: PutOffWriter;
  agents: ReceiverAgents;
  places: EndpointPlaces;
  secrets: EndpointSecrets;
  config: Config;
  logger: Logger;
  metrics: DispatcherMetrics;
}

/**
 * What an attempt asks of its job: nothing more, a retry after so many ms, or back to the queue
 * (as it was, or due later: its endpoint has no place for it now).
 */
const REQUEUE = Symbol('requeue');
type Next = null | number | typeof REQUEUE | StepAside;

/**
 * One attempt of one delivery: re-read everything from PostgreSQL (the job carries only the id),
 * take one of its endpoint's places in this process (see EndpointPlaces), or step aside when none
 * comes free soon, build and sign the body, send it, and record the attempt. A failure with
 * attempts left puts the same job back in the queue, delayed by the schedule's next step: the
 * delivery's own attempt count (in PostgreSQL) decides the step, so a redeliver or a crash never
 * desynchronises the schedule. The last failure marks the delivery abandoned.
 */
export async function deliver(deps: DeliverDeps, job: Job<DeliveryJobData>, token?: string): Promise<void> {
  const delivery = await deps.reader.read(job.data.deliveryId);
  if (!unsettled(delivery)) return;
  // The attempt's span continues the trace of the request or job that recorded the event.
  const next = tracingActive()
    ? await inSpan(
        'webhook deliver',
        {
          kind: 'consumer',
          parent: delivery.event?.trace,
          attributes: {
            'webhook.delivery_id': delivery.id,
            'webhook.event': delivery.eventName,
            'webhook.endpoint_id': delivery.endpoint.id,
          },
        },
        (span) => attempt(deps, delivery, span),
      )
    : await attempt(deps, delivery);
  if (next === null) return;
  // The delayed job keeps its id (the delivery's), so it stays the delivery's only job; one put
  // back as it was (its process is closing) is due at once, for another process.
  const delayMs = next === REQUEUE ? 0 : typeof next === 'number' ? next : next.comeBackInMs;
  const dueAt = Date.now() + delayMs;
  await job.moveToDelayed(dueAt, token);
  // Written in the background: the worker slot goes to the next job now (the writer's close, on
  // stop, waits for it).
  if (typeof next === 'object') void putOff(deps, delivery, new Date(dueAt));
  throw new DelayedError();
}

/**
 * After its job stepped aside (its endpoint had no place for it soon): the delivery's
 * next_attempt_at says when it is due again, as for a retry, so the sweeper leaves the delayed
 * job alone and the delivery log shows when it goes. Not an attempt. Written once the job is
 * delayed, which a run that lost its job's lock cannot do, and only over the delivery as this run
 * read it (its updated_at). A write that fails or finds the delivery changed is only logged: the
 * job is delayed already, and at worst the sweeper sends it early, and it steps aside again.
 */
async function putOff(deps: DeliverDeps, delivery: DeliveryToSend, dueAt: Date): Promise<void> {
  deps.metrics.steppedAside.inc();
  const deliveryId = delivery.id;
  try {
    if (!(await deps.putOff.write({ deliveryId, readAt: delivery.updatedAt, dueAt })))
      deps.logger.info({ deliveryId }, 'stepped-aside delivery changed since it was read; its due time is not written');
  } catch (error) {
    deps.logger.warn({ err: error, deliveryId }, 'could not write when a stepped-aside delivery is due');
  }
}

/** False when the delivery is gone, or settled by an earlier run of its job that crashed before completing it. */
function unsettled(delivery: DeliveryToSend | null): delivery is DeliveryToSend {
  return delivery !== null && delivery.status !== 'succeeded' && delivery.status !== 'abandoned';
}

/** `read` sent once, if its endpoint still takes it, under one of the endpoint's places. */
async function attempt(deps: DeliverDeps, read: DeliveryToSend, span?: SpanHandle): Promise<Next> {
  if (await settledUnsent(deps, read, span)) return null;
  const place = await deps.places.take(read.endpoint.id);
  if (!place) {
    span?.setAttributes({ 'webhook.outcome': 'requeued' });
    return REQUEUE;
  }
  if (!('release' in place)) {
    span?.setAttributes({ 'webhook.outcome': 'stepped_aside' });
    return place;
  }
  try {
    return await send(deps, read, place, span);
  } finally {
    place.release();
  }
}

/**
 * Settles without a request a delivery whose endpoint takes none: abandoned when the endpoint is
 * deleted, waiting (for a resume) when it is disabled. False when the endpoint takes it.
 */
async function settledUnsent(deps: DeliverDeps, delivery: DeliveryToSend, span?: SpanHandle): Promise<boolean> {
  const { endpoint } = delivery;
  if (endpoint.deletedAt) {
    await deps.db.webhookDelivery.update({
      where: { id: delivery.id },
      data: { status: 'abandoned', nextAttemptAt: null },
    });
    span?.setAttributes({ 'webhook.outcome': 'endpoint_deleted' });
    return true;
  }
  if (endpoint.status === 'disabled') {
    await deps.db.webhookDelivery.update({
      where: { id: delivery.id },
      data: { status: 'waiting', nextAttemptAt: null },
    });
    deps.metrics.deliveries.inc({ outcome: 'waiting' });
    span?.setAttributes({ 'webhook.outcome': 'waiting' });
    return true;
  }
  return false;
}

/**
 * Sends `delivery` once, holding `place`, which it gives back as soon as the answer is in, and
 * records the attempt; returns the wait before the next attempt, or null when there is none.
 */
async function send(
  deps: DeliverDeps,
  delivery: DeliveryToSend,
  place: Place,
  span?: SpanHandle,
): Promise<number | null> {
  const { config, metrics } = deps;
  const { endpoint } = delivery;
  const envelope = buildEnvelope(delivery);
  const startedAt = new Date();
  let body = '';
  let headers: Record<string, string> | null = null;
  try {
    body = JSON.stringify(withSecretFields(envelope, delivery.event?.sealedData, config.webhooks.secretKey));
    headers = signedHeaders({
      deliveryId: delivery.id,
      eventName: delivery.eventName,
      body,
      secrets: deps.secrets,
      endpoint,
      now: startedAt.getTime(),
    });
  } catch (error) {
    deps.logger.error({ err: error, endpointId: endpoint.id }, 'cannot open a sealed secret of this delivery');
  }
  // An unreadable secret (WEBHOOK_SECRET_KEY changed: the endpoint's or the event's sealed fields) is a failed attempt like any other, so it
  // shows in the delivery log and runs out on the schedule instead of looping unseen.
  const result = headers
    ? await postWebhook({
        url: endpoint.url,
        headers,
        body,
        timeoutMs: config.webhooks.timeoutMs,
        allowPrivateAddresses: config.webhooks.allowPrivateUrls,
        agents: deps.agents,
      })
    : {
        ok: false,
        statusCode: null,
        durationMs: 0,
        responseBody: null,
        error: 'a sealed secret cannot be decrypted (was WEBHOOK_SECRET_KEY changed?)',
      };
  // Recording the attempt needs no place: the endpoint's next request goes out meanwhile.
  place.release();
  metrics.attemptSeconds.observe({ ok: String(result.ok) }, result.durationMs / 1000);

  const { outcome, endpointDisabled, nextDelayMs } = await deps.recorder.record({
    deliveryId: delivery.id,
    endpointId: endpoint.id,
    startedAt,
    result,
  });
  metrics.deliveries.inc({ outcome: outcome === 'retrying' ? 'failed' : outcome });
  span?.setAttributes({
    'webhook.outcome': outcome,
    ...(result.statusCode === null ? {} : { 'http.response.status_code': result.statusCode }),
  });
  if (endpointDisabled) {
    deps.logger.warn({ endpointId: endpoint.id }, 'webhook endpoint disabled after consecutive failures');
  }
  return outcome === 'retrying' ? nextDelayMs : null;
}
